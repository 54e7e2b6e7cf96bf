/**
 * generate.generate-mock-data: `primary` describes one record; the output is `count` records of that
 * shape. The description is compiled once into a tree of generators (so a bad token fails before
 * anything is generated), then run per record on a Faker instance of this run alone.
 *
 * Output bound: none small by construction (`count` records, up to 5 elements per array level of the
 * description), so every generated value is charged to the budget as it is made.
 */

import { allLocales, base, en, Faker, type LocaleDefinition } from "@faker-js/faker";
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import { formatPath, isObject, type JsonObject, type PathKey, setOwn } from "../shared/paths";
import { describeType } from "../shared/records";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";

export const id = "generate.generate-mock-data";

export const configSchema = t.Object(
  {
    // TypeBox's own Integer: Elysia's t.Integer also accepts numeric strings ("3"), which a JSON config must not
    count: Type.Integer({ minimum: 1, maximum: 10_000, default: 10, description: "records in the output array" }),
    seed: t.Optional(Type.Integer({ description: "same seed, same records; without it every run differs" })),
    locale: t.String({ default: "en", minLength: 1, description: "locale of names, addresses and phones (BCP 47, e.g. de-AT)" }),
  },
  { additionalProperties: false },
);

export type MockDataConfig = Static<typeof configSchema>;

/** With a seed, relative dates are computed from this instant, so the same seed gives the same dates on any day. */
const SEEDED_REFERENCE_DATE = new Date("2025-01-01T00:00:00Z");

type Generate = (faker: Faker) => unknown;
type Arg = string | number | boolean | null;

/** The faker locale chain for a BCP 47 tag: the exact locale, else its language; English fills gaps. */
export function fakerLocale(tag: string): LocaleDefinition[] {
  let canonical: string;
  try {
    [canonical = ""] = Intl.getCanonicalLocales(tag);
  } catch {
    throw new UtilityConfigError("locale", `'${tag}' is not a valid locale tag (BCP 47, e.g. en, de-AT)`);
  }
  const locales = allLocales as Record<string, LocaleDefinition>;
  const [language = ""] = canonical.split("-");
  const exact = canonical.replaceAll("-", "_");
  const name =
    [exact, language].find((candidate) => candidate !== "base" && candidate in locales) ??
    Object.keys(locales).find((candidate) => candidate.startsWith(`${language}_`));
  if (!name) {
    throw new UtilityConfigError(
      "locale",
      `no fake data for locale '${tag}'; available: ${Object.keys(locales)
        .filter((key) => key !== "base")
        .join(", ")}`,
    );
  }
  return [locales[name]!, en, base];
}

// ---- generator tokens -------------------------------------------------------------------------

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
const parseUtc = (text: string): Date => new Date(/T\d{2}:\d{2}/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text);

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
const TOKENS: Record<string, (args: Arg[], name: string) => Generate> = {
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
function compileTemplate(text: string, where: string): Generate {
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

// ---- inference from examples ------------------------------------------------------------------

/** Normalised key name → generator; keys are lower-cased without `_`, `-` or spaces. */
const KEY_HINTS: Record<string, string> = {
  email: "email",
  emailaddress: "email",
  mail: "email",
  firstname: "firstName",
  givenname: "firstName",
  forename: "firstName",
  lastname: "lastName",
  surname: "lastName",
  familyname: "lastName",
  name: "fullName",
  fullname: "fullName",
  displayname: "fullName",
  username: "username",
  login: "username",
  handle: "username",
  phone: "phone",
  phonenumber: "phone",
  mobile: "phone",
  tel: "phone",
  telephone: "phone",
  cell: "phone",
  company: "company",
  companyname: "company",
  organization: "company",
  organisation: "company",
  employer: "company",
  jobtitle: "jobTitle",
  occupation: "jobTitle",
  position: "jobTitle",
  street: "street",
  streetaddress: "street",
  address: "street",
  addressline1: "street",
  city: "city",
  town: "city",
  country: "country",
  zip: "zip",
  zipcode: "zip",
  postcode: "zip",
  postalcode: "zip",
  lat: "latitude",
  latitude: "latitude",
  lng: "longitude",
  lon: "longitude",
  long: "longitude",
  longitude: "longitude",
  url: "url",
  website: "url",
  homepage: "url",
  link: "url",
  ip: "ipv4",
  ipaddress: "ipv4",
  ipv4: "ipv4",
  color: "color",
  colour: "color",
  description: "sentence",
  bio: "sentence",
  summary: "sentence",
  comment: "sentence",
  notes: "sentence",
};
/** Hints that also apply as the end of a longer key (`customerEmail`, `billing_city`), where the end is unambiguous. */
const SUFFIX_HINTS = [
  "email",
  "phone",
  "firstname",
  "lastname",
  "fullname",
  "username",
  "city",
  "country",
  "zipcode",
  "postcode",
  "postalcode",
  "street",
  "url",
  "latitude",
  "longitude",
  "ipaddress",
];

function hintFor(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  const normalised = key.toLowerCase().replace(/[\s_-]/g, "");
  if (Object.hasOwn(KEY_HINTS, normalised)) return KEY_HINTS[normalised];
  const suffix = SUFFIX_HINTS.find((hint) => normalised.endsWith(hint));
  return suffix === undefined ? undefined : KEY_HINTS[suffix];
}

const SHAPES: [RegExp, Generate][] = [
  [/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, (f) => f.string.uuid()],
  [/^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i, (f) => f.internet.email()],
  [/^https?:\/\/\S+$/i, (f) => f.internet.url()],
  [/^\d{1,3}(\.\d{1,3}){3}$/, (f) => f.internet.ipv4()],
  [/^#[0-9a-f]{6}$/i, (f) => f.color.rgb()],
];
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const YEAR_MS = 365 * 86_400_000;

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function inferString(example: string, key: string | undefined): Generate {
  const hint = hintFor(key);
  if (hint) return TOKENS[hint]!([], hint);
  for (const [shape, generate] of SHAPES) if (shape.test(example)) return generate;
  if (ISO_DATE.test(example) || ISO_DATETIME.test(example)) {
    const around = parseUtc(example).getTime();
    if (!Number.isNaN(around)) {
      const dateOnly = ISO_DATE.test(example);
      return (f) => {
        const iso = f.date.between({ from: around - YEAR_MS, to: around + YEAR_MS }).toISOString();
        return dateOnly ? iso.slice(0, 10) : iso;
      };
    }
  }
  // a code such as "AB-1234" or "x9": same letters-and-digits pattern, punctuation kept
  if (/^[\p{L}\d_./#-]+$/u.test(example) && /\d/.test(example)) {
    return (f) =>
      example.replace(/[A-Z]|[a-z]|\d/g, (char) =>
        char <= "9" ? f.string.numeric() : f.string.alpha({ casing: char <= "Z" ? "upper" : "lower" }),
      );
  }
  const style = /^[A-Z]/.test(example) ? capitalise : (text: string) => text;
  const words = example.trim() === "" ? 0 : example.trim().split(/\s+/).length;
  if (words === 0) return () => example;
  if (words === 1) {
    const length = example.length;
    let similar: string[] | undefined; // filtered once per run: faker's own length filter scans the word list on every call
    return (f) => {
      similar ??= f.definitions.lorem.word.filter((word) => Math.abs(word.length - length) <= 3);
      return style(similar.length > 0 ? f.helpers.arrayElement(similar) : f.lorem.word());
    };
  }
  if (/[.!?]$/.test(example)) return (f) => f.lorem.sentence(words);
  return (f) => style(f.lorem.words(words));
}

function inferNumber(example: number, key: string | undefined): Generate {
  const hint = hintFor(key);
  if (hint === "latitude" || hint === "longitude") return TOKENS[hint]!([], hint);
  const magnitude = Math.abs(example);
  const sign = example < 0 ? -1 : 1;
  const digits = magnitude < 1 ? 1 : Math.min(15, Math.floor(Math.log10(magnitude)) + 1);
  const min = digits === 1 ? 0 : 10 ** (digits - 1);
  const max = 10 ** digits - 1;
  if (Number.isInteger(example)) return (f) => sign * f.number.int({ min, max });
  const fraction = /\.(\d+)$/.exec(String(example))?.[1]?.length ?? 2;
  const fractionDigits = Math.min(fraction, 10);
  const upper = magnitude < 1 ? 1 : max + 1; // 0.75 gives values below 1, 19.99 values from 10 to 100
  return (f) => sign * f.number.float({ min, max: upper, fractionDigits });
}

/**
 * The generator of a description. Every generated value is charged to `budget` as it is made: arrays
 * nested in the description multiply (up to 5 elements each), so one record can be far larger than its
 * description, and `count` records larger still.
 */
function compile(value: unknown, keys: PathKey[], budget: OutputBudget): Generate {
  const where = keys.length === 0 ? "the root" : `'${formatPath(keys)}'`;
  const key = [...keys].reverse().find((step): step is string => typeof step === "string");
  if (typeof value === "string") return charged(value.includes("{{") ? compileTemplate(value, where) : inferString(value, key), budget);
  if (typeof value === "number") return charged(inferNumber(value, key), budget);
  if (typeof value === "boolean") return (f) => (budget.charge(5), f.datatype.boolean());
  if (Array.isArray(value)) {
    if (value.length === 0) return () => (budget.charge(2), []);
    const element = compile(value[0], [...keys, 0], budget);
    return (f) => {
      const length = f.number.int({ min: 1, max: 5 });
      budget.charge(length + 1);
      return Array.from({ length }, () => element(f));
    };
  }
  if (isObject(value)) {
    const members = Object.keys(value).map((name) => [name, compile(value[name], [...keys, name], budget)] as const);
    const keyBytes = members.reduce((sum, [name]) => sum + name.length + 4, 2);
    return (f) => {
      budget.charge(keyBytes);
      const out: JsonObject = {};
      for (const [name, generate] of members) setOwn(out, name, generate(f));
      return out;
    };
  }
  return () => (budget.charge(4), value);
}

/** A scalar generator whose every value is charged by its length. */
function charged(generate: Generate, budget: OutputBudget): Generate {
  return (f) => {
    const value = generate(f);
    budget.charge(typeof value === "string" ? value.length + 2 : 8);
    return value;
  };
}

export function generateMockData(primary: unknown, config: MockDataConfig, budget = unlimitedBudget()): unknown[] {
  const faker = new Faker({ locale: fakerLocale(config.locale) });
  if (!isObject(primary) && !Array.isArray(primary) && typeof primary !== "string") {
    throw new UtilityError(
      `${id} takes a description of one record (an object, an array or a {{generator}} string); primary is ${describeType(primary)}`,
    );
  }
  if (config.seed !== undefined) {
    faker.seed(config.seed);
    faker.setDefaultRefDate(SEEDED_REFERENCE_DATE);
  } else faker.seed();
  const generate = compile(primary, [], budget);
  return Array.from({ length: config.count }, () => generate(faker));
}

export default defineUtility({
  id,
  name: "Generate mock data",
  category: "generate",
  description:
    "Generates count records shaped like primary: {{generator}} tokens (email, fullName, integer(min,max), pick(a,b), …) and example values inferred from their key names and types. Deterministic with seed.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return generateMockData(inputs.primary, config, budget);
  },
});
