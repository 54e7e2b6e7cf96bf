/**
 * Detectors of sensitive values inside text, for cleanup.redact. Each is a candidate regular
 * expression plus a check that confirms (or shortens) a candidate: the Luhn check for cards, mod-97
 * and the country's length for IBANs, a real address parser for IPv6.
 *
 * The candidate expressions are ours, not users': every one starts behind a negative lookbehind, so
 * a scan tries one start per token rather than one per character, and none nests quantifiers.
 */
export const PATTERN_NAMES = ["email", "phone", "creditCard", "iban", "ipv4", "ipv6", "ssn", "url"] as const;
export type PatternName = (typeof PATTERN_NAMES)[number];

export interface Span {
  start: number;
  end: number;
}

interface Detector {
  candidate: RegExp;
  /** the length of the confirmed value at the candidate's start (at most the candidate's), 0 to reject */
  confirm(candidate: string, text: string, start: number): number;
  /** the hint that `maskStyle: "partial"` leaves */
  partial(value: string): string;
}

const digitCount = (text: string): number => text.replace(/\D/g, "").length;

/** Every digit but the last four becomes `*`; separators stay. */
function keepLastFourDigits(value: string): string {
  let toHide = digitCount(value) - 4;
  return value.replace(/\d/g, (digit) => (toHide-- > 0 ? "*" : digit));
}

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616: move the first four characters to the end, letters as 10–35, remainder mod 97 is 1. */
export function passesMod97(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= "A" ? char.charCodeAt(0) - 55 : char.charCodeAt(0) - 48;
    remainder = (value > 9 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/** IBAN lengths of the SWIFT registry, so that a candidate stops where its country's IBAN ends. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

function confirmIban(candidate: string, text: string, start: number): number {
  const expected = IBAN_LENGTHS[candidate.slice(0, 2)];
  let compact = "";
  let length = 0;
  for (const char of candidate) {
    if (compact.length === expected) break;
    length += 1;
    if (char !== " ") compact += char;
  }
  if (expected === undefined ? compact.length < 15 || compact.length > 34 : compact.length !== expected) return 0;
  if (/[A-Za-z0-9]/.test(text[start + length] ?? "")) return 0; // the IBAN is the start of a longer token
  return passesMod97(compact) ? length : 0;
}

const URL_TRAILING_PUNCTUATION = /[.,;:!?'")\]}]+$/;
const DATE_SHAPES = [/^\d{4}[-./]\d{1,2}[-./]\d{1,2}$/, /^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/];
const IPV4_SHAPE = /^\d{1,3}(\.\d{1,3}){3}$/;
const DECIMAL_SHAPE = /^\d+\.\d+$/;
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;

/**
 * A phone number has 7–15 digits (E.164) and is not a date, a dotted quad, a decimal, an SSN, a bare
 * short number, or numbers joined by dots and other separators at once (`192.168.1.1 2024`).
 */
function confirmPhone(candidate: string): number {
  const digits = digitCount(candidate);
  if (digits < 7 || digits > 15) return 0;
  const separators = new Set(candidate.replace(/[\d+()]/g, ""));
  if (separators.has(".") && separators.size > 1) return 0;
  if (DATE_SHAPES.some((shape) => shape.test(candidate)) || IPV4_SHAPE.test(candidate) || DECIMAL_SHAPE.test(candidate)) return 0;
  if (SSN_SHAPE.test(candidate)) return 0;
  if (/^\d+$/.test(candidate) && digits < 10) return 0;
  return candidate.length;
}

function isIpv6(candidate: string): boolean {
  if (!/[0-9a-f]/i.test(candidate)) return false;
  try {
    new URL(`http://[${candidate}]/`);
    return true;
  } catch {
    return false;
  }
}

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const whole = (candidate: string) => candidate.length;

export const DETECTORS: Record<PatternName, Detector> = {
  url: {
    candidate: /(?<![\w@./])(?:https?:\/\/|ftp:\/\/|www\.)[^\s<>"'`]+/gi,
    confirm: (candidate) => {
      const length = candidate.replace(URL_TRAILING_PUNCTUATION, "").length;
      return /^(?:https?:\/\/|ftp:\/\/|www\.)./i.test(candidate.slice(0, length)) ? length : 0;
    },
    partial: (value) => `${/^(?:[a-z]+:\/\/)?[^/?#]*/i.exec(value)![0]}/***`,
  },
  email: {
    // local part: the atext characters of RFC 5322; top-level domain: letters or an IDN's `xn--` form
    candidate:
      /(?<![\w.!#$%&'*+/=?^`{|}~-])[\w.!#$%&'*+/=?^`{|}~-]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})(?![\w-])/gi,
    confirm: whole,
    partial: (value) => `${value[0]}***${value.slice(value.lastIndexOf("@"))}`,
  },
  iban: {
    candidate: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}/g,
    confirm: confirmIban,
    partial: (value) => {
      let toHide = value.replace(/ /g, "").length - 6;
      return value.slice(0, 2) + value.slice(2).replace(/[A-Z0-9]/g, (char) => (toHide-- > 0 ? "*" : char));
    },
  },
  creditCard: {
    candidate: /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g,
    confirm: (candidate) => (passesLuhn(candidate.replace(/\D/g, "")) ? candidate.length : 0),
    partial: keepLastFourDigits,
  },
  ssn: {
    candidate: /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g,
    confirm: whole,
    partial: keepLastFourDigits,
  },
  ipv6: {
    candidate: /(?<![\w:.])(?:[0-9a-f]{0,4}:){2,7}(?:[0-9a-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])/gi,
    confirm: (candidate) => (isIpv6(candidate) ? candidate.length : 0),
    partial: (value) => `${value.slice(0, value.indexOf(":"))}:***`,
  },
  ipv4: {
    candidate: new RegExp(`(?<![\\d.])(?:${OCTET}\\.){3}${OCTET}(?!\\.?\\d)`, "g"),
    confirm: whole,
    partial: (value) => `${value.slice(0, value.indexOf("."))}.*.*.*`,
  },
  phone: {
    // not from inside a longer digit sequence (`4111 1111 1111 1111` is no phone from its second group on)
    candidate: /(?<![\w+.]|\d[ .-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?![\w:])/g,
    confirm: confirmPhone,
    partial: keepLastFourDigits,
  },
};

/** When two detectors claim overlapping text, the earlier one here wins (a URL holding an address stays one URL). */
export const DETECTOR_PRIORITY: readonly PatternName[] = ["url", "email", "iban", "creditCard", "ssn", "ipv6", "ipv4", "phone"];

/** The confirmed spans of one detector in `text`, left to right. */
export function detect(name: PatternName, text: string): Span[] {
  const { candidate, confirm } = DETECTORS[name];
  const spans: Span[] = [];
  candidate.lastIndex = 0;
  for (let match = candidate.exec(text); match !== null; match = candidate.exec(text)) {
    const length = confirm(match[0], text, match.index);
    if (length > 0) {
      spans.push({ start: match.index, end: match.index + length });
      candidate.lastIndex = match.index + length;
    } else {
      candidate.lastIndex = match.index + 1; // a rejected candidate may hide a real value further in
    }
  }
  return spans;
}
