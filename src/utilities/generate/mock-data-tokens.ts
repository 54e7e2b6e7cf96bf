/**
 * The `{{generator}}` tokens of generate.generate-mock-data (generate-mock-data.ts): the table of
 * generators, each checking its arguments once, and the compiling of a string holding tokens.
 */
import type { Faker } from "@faker-js/faker";
import { UtilityError } from "../types";

export type Generate = (faker: Faker) => unknown;
type Arg = string | number | boolean | null;

class TokenError extends Error {}

const numberArg = (args: Arg[], index: number, fallback: number, what: string): number => {
  const value = args[index];
  if (value === undefined) return fallback;
  if (typeof value !== "number") throw new TokenError(`${what} must be a number, got ${JSON.stringify(value)}`);
  return value;
};

function range(args: Arg[], name: string, defaults: [number, number], integer: boolean): { min: number; max: number } {
  const min = numberArg(args, 0, defaults[0], `${name}: min`);
  const max = numberArg(args, 1, Math.max(defaults[1], min), `${name}: max`);
  if (integer && !(Number.isSafeInteger(min) && Number.isSafeInteger(max))) throw new TokenError(`${name}: min and max must be integers`);
  if (min > max) throw new TokenError(`${name}: min (${min}) is greater than max (${max})`);
  return { min, max };
}

function dateArg(args: Arg[], index: number, name: string): Date | undefined {
  const value = args[index];
  if (value === undefined) return undefined;
  const date = typeof value === "number" ? new Date(value) : typeof value === "string" ? parseUtc(value) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw new TokenError(`${name}: ${JSON.stringify(value)} is not a date (ISO 8601, e.g. 2024-01-31)`);
  return date;
}

/** ISO 8601 text; a date-time without an offset is UTC (never the server's time zone). */
export const parseUtc = (text: string): Date =>
  new Date(/T\d{2}:\d{2}/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text);

/** Without bounds: the year before the reference date (now, or the seeded reference). */
function dateBetween(args: Arg[], name: string): (faker: Faker) => Date {
  const from = dateArg(args, 0, name);
  const to = dateArg(args, 1, name);
  if (from && to && from > to) throw new TokenError(`${name}: from is after to`);
  return (faker) => {
    const reference = faker.defaultRefDate();
    const end = to ?? (from && from > reference ? new Date(from.getTime() + 365 * 86_400_000) : reference);
    const start = from ?? new Date(end.getTime() - 365 * 86_400_000);
    return faker.date.between({ from: start, to: end });
  };
}

/** Each entry checks its arguments once and returns the generator. */
export const TOKENS: Record<string, (args: Arg[], name: string) => Generate> = {
  uuid: () => (f) => f.string.uuid(),
  firstName: () => (f) => f.person.firstName(),
  lastName: () => (f) => f.person.lastName(),
  fullName: () => (f) => f.person.fullName(),
  email: () => (f) => f.internet.email(),
  phone: () => (f) => f.phone.number(),
  username: () => (f) => f.internet.username(),
  company: () => (f) => f.company.name(),
  jobTitle: () => (f) => f.person.jobTitle(),
  street: () => (f) => f.location.streetAddress(),
  city: () => (f) => f.location.city(),
  country: () => (f) => f.location.country(),
  zip: () => (f) => f.location.zipCode(),
  latitude: () => (f) => f.location.latitude(),
  longitude: () => (f) => f.location.longitude(),
  url: () => (f) => f.internet.url(),
  ipv4: () => (f) => f.internet.ipv4(),
  color: () => (f) => f.color.human(),
  word: () => (f) => f.lorem.word(),
  sentence: () => (f) => f.lorem.sentence(),
  paragraph: () => (f) => f.lorem.paragraph(),
  boolean: () => (f) => f.datatype.boolean(),
  integer: (args, name) => {
    const bounds = range(args, name, [0, 1000], true);
    return (f) => f.number.int(bounds);
  },
  float: (args, name) => {
    const bounds = range(args, name, [0, 1000], false);
    const fractionDigits = numberArg(args, 2, 2, `${name}: decimals`);
    if (!Number.isInteger(fractionDigits) || fractionDigits < 0 || fractionDigits > 15)
      throw new TokenError(`${name}: decimals must be an integer from 0 to 15`);
    return (f) => f.number.float({ ...bounds, fractionDigits });
  },
  date: (args, name) => {
    const between = dateBetween(args, name);
    return (f) => between(f).toISOString().slice(0, 10);
  },
  datetime: (args, name) => {
    const between = dateBetween(args, name);
    return (f) => between(f).toISOString();
  },
  pick: (args, name) => {
    if (args.length === 0) throw new TokenError(`${name} needs at least one choice: pick(a, b, …)`);
    return (f) => f.helpers.arrayElement(args);
  },
};
const TOKEN_NAMES = Object.keys(TOKENS);

const TOKEN = /\{\{(.*?)\}\}/gs;
const CALL = /^\s*([A-Za-z]\w*)\s*(?:\((.*)\))?\s*$/s;

/** `a, "b, c", 3, true` → ["a", "b, c", 3, true]. Bare words are text; quotes keep commas and spaces. */
function parseArgs(text: string): Arg[] {
  if (text.trim() === "") return [];
  const args: Arg[] = [];
  const pattern = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^,]*?))\s*(?:,|$)/gy;
  for (let match = pattern.exec(text); match !== null && match.index < text.length; match = pattern.exec(text)) {
    const quoted = match[1] ?? match[2];
    if (quoted !== undefined) args.push(quoted.replace(/\\(.)/g, "$1"));
    else args.push(literal(match[3]!));
  }
  return args;
}

function literal(text: string): Arg {
  if (text === "true" || text === "false") return text === "true";
  if (text === "null") return null;
  if (text !== "" && Number.isFinite(Number(text))) return Number(text);
  return text;
}

function compileToken(content: string, where: string): Generate {
  const call = CALL.exec(content);
  if (!call) throw new UtilityError(`'{{${content}}}' at ${where} is not a generator token such as {{email}} or {{integer(1, 10)}}`);
  const [, name = "", argText] = call;
  const factory = Object.hasOwn(TOKENS, name) ? TOKENS[name] : undefined;
  if (!factory) throw new UtilityError(`unknown generator '${name}' at ${where}; known generators: ${TOKEN_NAMES.join(", ")}`);
  try {
    return factory(argText === undefined ? [] : parseArgs(argText), name);
  } catch (error) {
    if (error instanceof TokenError) throw new UtilityError(`{{${content.trim()}}} at ${where}: ${error.message}`);
    throw error;
  }
}

/** A whole-token string keeps the generator's type; tokens inside text are interpolated. */
export function compileTemplate(text: string, where: string): Generate {
  const parts: (string | Generate)[] = [];
  let position = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (match.index > position) parts.push(text.slice(position, match.index));
    parts.push(compileToken(match[1]!, where));
    position = match.index + match[0].length;
  }
  if (position < text.length) parts.push(text.slice(position));
  const [only] = parts;
  if (parts.length === 1 && typeof only === "function") return only;
  return (f) => parts.map((part) => (typeof part === "string" ? part : String(part(f)))).join("");
}
