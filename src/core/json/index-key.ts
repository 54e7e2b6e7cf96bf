/**
 * An order-preserving byte encoding of JSON values, for the query indexes' B-tree (the tuple layer of
 * FoundationDB, adapted to JSON): comparing two encodings byte by byte (PostgreSQL's bytea order)
 * compares the values. Each value starts with a type tag, so values of different JSON types never
 * compare equal and a range bounded within one type never reaches another. Numbers are exact decimals
 * read from the stored text (`1.0` and `1` encode the same; integers past 2^53 stay exact), strings
 * compare by code point. Every encoding is prefix-free (no value's encoding starts another's), so a
 * key of several fields is their concatenation and a descending field is its bytes inverted.
 */

export const TAG = {
  missing: 0x10,
  null: 0x20,
  boolean: 0x30,
  number: 0x40,
  string: 0x50,
  object: 0x60,
  emptyArray: 0x70,
} as const;

/** What JSON type a tag names; the type order of a sort is this order. */
export type ValueType = keyof typeof TAG;

const NEGATIVE = 0x01,
  ZERO = 0x02,
  POSITIVE = 0x03;
/** a string's end (0x00 0x01), and its escaped U+0000 (0x00 0xff): 0x00 never ends a string otherwise */
const END = [0x00, 0x01];
const EXPONENT_BIAS = 0x8000_0000;

const encoder = new TextEncoder();

class Bytes {
  private buffer = new Uint8Array(32);
  length = 0;
  push(...bytes: number[]) {
    for (const byte of bytes) {
      if (this.length === this.buffer.length) {
        const grown = new Uint8Array(this.buffer.length * 2);
        grown.set(this.buffer);
        this.buffer = grown;
      }
      this.buffer[this.length++] = byte;
    }
  }
  result = () => this.buffer.slice(0, this.length);
}

/** A JSON number literal as sign, decimal exponent and significant digits: value = 0.d1d2… × 10^exponent. */
export function decimalOf(literal: string): { sign: -1 | 0 | 1; exponent: number; digits: string } | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return undefined;
  const [, minus, whole, fraction = "", exponentText = "0"] = match;
  const all = whole + fraction;
  const leading = all.length - all.replace(/^0+/, "").length;
  const digits = all.slice(leading).replace(/0+$/, "");
  if (digits === "") return { sign: 0, exponent: 0, digits: "" };
  const exponent = Number(exponentText) + whole.length - leading;
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) >= EXPONENT_BIAS) return undefined;
  return { sign: minus ? -1 : 1, exponent, digits };
}

function pushNumber(out: Bytes, literal: string): boolean {
  const decimal = decimalOf(literal);
  if (!decimal) return false;
  out.push(TAG.number);
  if (decimal.sign === 0) {
    out.push(ZERO);
    return true;
  }
  const flip = decimal.sign < 0 ? 0xff : 0;
  out.push(decimal.sign < 0 ? NEGATIVE : POSITIVE);
  const biased = decimal.exponent + EXPONENT_BIAS;
  out.push(((biased >>> 24) & 0xff) ^ flip, ((biased >>> 16) & 0xff) ^ flip, ((biased >>> 8) & 0xff) ^ flip, (biased & 0xff) ^ flip);
  // digits 1–10 then 0 as the end: a shorter significand sorts first, as 0.12 < 0.123
  for (let i = 0; i < decimal.digits.length; i++) out.push((decimal.digits.charCodeAt(i) - 0x2f) ^ flip);
  out.push(flip);
  return true;
}

function pushEscaped(out: Bytes, bytes: Uint8Array) {
  for (const byte of bytes) {
    if (byte === 0) out.push(0x00, 0xff);
    else out.push(byte);
  }
}

/** A scalar's parsed form, as a filter gives it: the JSON text of a number is kept to stay exact. */
export type KeyValue =
  | { type: "missing" | "null" | "emptyArray" }
  | { type: "boolean"; value: boolean }
  | { type: "number"; literal: string }
  | { type: "string"; value: string }
  | { type: "object"; text: string };

/** The encoding of one value (ascending); undefined for a number outside what Kiln indexes (an exponent past 2^31). */
export function encodeValue(value: KeyValue): Uint8Array | undefined {
  const out = new Bytes();
  switch (value.type) {
    case "boolean":
      out.push(TAG.boolean, value.value ? 1 : 0);
      break;
    case "number":
      if (!pushNumber(out, value.literal)) return undefined;
      break;
    case "string":
      out.push(TAG.string);
      pushEscaped(out, encoder.encode(value.value));
      out.push(...END);
      break;
    case "object":
      out.push(TAG.object);
      pushEscaped(out, encoder.encode(value.text));
      out.push(...END);
      break;
    default:
      out.push(TAG[value.type]);
  }
  return out.result();
}

/** The bytes every string starting with `prefix` begins with. */
export function stringPrefix(prefix: string): Uint8Array {
  const out = new Bytes();
  out.push(TAG.string);
  pushEscaped(out, encoder.encode(prefix));
  return out.result();
}

export const invert = (bytes: Uint8Array) => bytes.map((byte) => byte ^ 0xff);

/** The smallest byte string greater than every string that starts with `bytes`; undefined: none (all 0xff). */
export function prefixEnd(bytes: Uint8Array): Uint8Array | undefined {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0xff) end--;
  if (end === 0) return undefined;
  const next = bytes.slice(0, end);
  next[end - 1]++;
  return next;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Byte order, as PostgreSQL compares bytea. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Where the (ascending) encoding starting at `at` ends. */
function componentEnd(bytes: Uint8Array, at: number, flip: number): number {
  const tag = bytes[at] ^ flip;
  if (tag === TAG.boolean) return at + 2;
  if (tag === TAG.number) {
    const sign = bytes[at + 1] ^ flip;
    if (sign === ZERO) return at + 2;
    const end = sign === NEGATIVE ? 0xff : 0;
    let i = at + 6;
    while ((bytes[i] ^ flip) !== end) i++;
    return i + 1;
  }
  if (tag === TAG.string || tag === TAG.object) {
    let i = at + 1;
    while (!((bytes[i] ^ flip) === 0 && (bytes[i + 1] ^ flip) === 1)) i += (bytes[i] ^ flip) === 0 ? 2 : 1;
    return i + 2;
  }
  return at + 1;
}

/** A key cut into its fields' ascending encodings (a descending field's bytes inverted back). */
export function splitKey(key: Uint8Array, descending: boolean[]): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const desc of descending) {
    const end = componentEnd(key, at, desc ? 0xff : 0);
    const part = key.slice(at, end);
    parts.push(desc ? invert(part) : part);
    at = end;
  }
  return parts;
}
