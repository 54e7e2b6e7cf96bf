/**
 * generate.generate-mock-data: `primary` describes one record; the output is `count` records of that
 * shape. The description is compiled once into a tree of generators (so a bad token fails before
 * anything is generated), then run per record on a Faker instance of this run alone.
 *
 * Output bound: none small by construction (`count` records, up to 5 elements per array level of the
 * description), so every generated value is charged to the budget as it is made.
 */

import type { LocaleDefinition } from "@faker-js/faker";
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { type OutputBudget, unlimitedBudget } from "../budget";
import { formatPath, isObject, type JsonObject, type PathKey, setOwn } from "../shared/paths";
import { describeType } from "../shared/records";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";
import { compileTemplate, type Generate, parseUtc, TOKENS } from "./mock-data-tokens";

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

type FakerLibrary = typeof import("@faker-js/faker");
let library: FakerLibrary | undefined;

/**
 * faker, loaded by the first run that needs it: its locales are 15 MB of heap (257,000 objects) that
 * every thread importing the registry (the main thread, each worker) would otherwise hold from start-up,
 * and that every full garbage collection of that thread would mark again.
 */
function fakerLibrary(): FakerLibrary {
  library ??= import.meta.require("@faker-js/faker") as FakerLibrary;
  return library;
}

/** The faker locale chain for a BCP 47 tag: the exact locale, else its language; English fills gaps. */
export function fakerLocale(tag: string): LocaleDefinition[] {
  const { allLocales, base, en } = fakerLibrary();
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
  const faker = new (fakerLibrary().Faker)({ locale: fakerLocale(config.locale) });
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
