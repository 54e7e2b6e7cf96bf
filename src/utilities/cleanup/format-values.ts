/**
 * cleanup.format-values: formats strings, numbers, dates and booleans. Record-wise.
 *
 * Each value is formatted by one group at most: first a group whose `paths` select it (in the order
 * dates, numbers, booleans, strings, the first that can read the value), else the group of its type
 * among those without `paths` (an ISO 8601 string goes to `dates` when that group is given, other
 * strings to `strings`). With `paths`, a group also reads values of other types: numeric strings as
 * numbers, epoch numbers as dates, "yes"/"1"/… as booleans. A path selecting an object or array
 * applies to every value inside it.
 *
 * Output bound: none small by construction (`1e300` in locale style is 400 characters, an epoch `0`
 * becomes a 24-character date), so what each formatted string adds over its value is charged to the
 * budget; numbers and booleans formatted as such stay within a few times their input.
 */
import { type Static, Type, Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { mapLeaves } from "../shared/leaves";
import { PathSet, parsePaths } from "../shared/paths";
import { mapRecords } from "../shared/records";
import { defineUtility, UtilityConfigError, type UtilityInputs } from "../types";

export const id = "cleanup.format-values";

const paths = t.Optional(t.Array(t.String(), { description: "the values to format; default: every value of the group's type" }));
const options = <const T extends string>(values: readonly T[], settings: { default?: NoInfer<T>; description?: string } = {}) =>
  t.Union(
    values.map((value) => t.Literal(value)),
    settings,
  );

export const configSchema = t.Object(
  {
    strings: t.Object(
      {
        paths,
        case: t.Optional(options(["lower", "upper", "title", "sentence"])),
        trim: t.Boolean({ default: true, description: "on unless set to false, also when strings is given" }),
        collapseWhitespace: t.Boolean({ default: false, description: "runs of whitespace become one space" }),
      },
      { additionalProperties: false, default: { trim: true } },
    ),
    numbers: t.Optional(
      t.Object(
        {
          paths,
          // TypeBox's own Integer: Elysia's t.Integer also accepts numeric strings
          decimals: t.Optional(Type.Integer({ minimum: 0, maximum: 20, description: "digits after the decimal point" })),
          style: options(["plain", "locale", "currency", "percent"], {
            default: "plain",
            description: "plain rounds and stays a number; the others give text through Intl.NumberFormat",
          }),
          locale: t.String({ default: "en-US" }),
          currency: t.String({ default: "USD", description: "ISO 4217 code, for style currency" }),
        },
        { additionalProperties: false },
      ),
    ),
    dates: t.Optional(
      t.Object(
        {
          paths,
          format: options(["iso", "date", "epoch-ms", "epoch-s", "locale"], { default: "iso" }),
          locale: t.String({ default: "en-US" }),
          timeZone: t.String({ default: "UTC", description: "IANA time zone of the date and locale formats" }),
        },
        { additionalProperties: false },
      ),
    ),
    booleans: t.Optional(
      t.Object({ paths, as: options(["boolean", "yes-no", "number", "string"], { default: "boolean" }) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export type FormatValuesConfig = Static<typeof configSchema>;
/** What every group has: the paths it is limited to. */
type Group = Pick<FormatValuesConfig["strings"], "paths">;

/** Formats a value, or gives `undefined` when the value is not one the group reads. */
type Formatter = (value: unknown, selectedByPath: boolean) => unknown;

// ---- strings --------------------------------------------------------------------------------------

const CASES = {
  lower: (text: string) => text.toLowerCase(),
  upper: (text: string) => text.toUpperCase(),
  title: (text: string) => text.toLowerCase().replace(/(?<!\S)\S/g, (first) => first.toUpperCase()),
  sentence: (text: string) => text.toLowerCase().replace(/(?<=^\s*|[.!?]\s+)\S/g, (first) => first.toUpperCase()),
};

function stringFormatter(group: FormatValuesConfig["strings"]): Formatter {
  return (value) => {
    if (typeof value !== "string") return undefined;
    let text = value;
    if (group.trim) text = text.trim();
    if (group.collapseWhitespace) text = text.replace(/\s+/g, " ");
    return group.case ? CASES[group.case](text) : text;
  };
}

// ---- numbers --------------------------------------------------------------------------------------

const NUMERIC_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function checkLocale(locale: string, field: string): void {
  let supported: string[];
  try {
    supported = Intl.NumberFormat.supportedLocalesOf([locale]);
  } catch {
    throw new UtilityConfigError(field, `'${locale}' is not a valid locale tag (BCP 47, e.g. en-US, de-DE)`);
  }
  if (supported.length === 0) throw new UtilityConfigError(field, `locale '${locale}' is not supported`);
}

function numberFormatter(group: NonNullable<FormatValuesConfig["numbers"]>): Formatter {
  checkLocale(group.locale, "numbers/locale");
  const currency = group.currency.toUpperCase();
  if (!Intl.supportedValuesOf("currency").includes(currency)) {
    throw new UtilityConfigError("numbers/currency", `'${group.currency}' is not an ISO 4217 currency code (e.g. USD, EUR)`);
  }
  const digits = group.decimals === undefined ? {} : { minimumFractionDigits: group.decimals, maximumFractionDigits: group.decimals };
  const formatter =
    group.style === "plain"
      ? new Intl.NumberFormat("en-US", { useGrouping: false, ...digits })
      : new Intl.NumberFormat(group.locale, {
          style: group.style === "locale" ? "decimal" : group.style,
          ...(group.style === "currency" ? { currency } : {}),
          ...digits,
        });
  // JavaScriptCore's Intl formats the shortest decimal text of a double, so 1.005 rounds to 1.01 (tested)
  const text = (value: number) => formatter.format(value);
  const format =
    group.style !== "plain" ? text : group.decimals === undefined ? (value: number) => value : (value: number) => Number(text(value));
  return (value, selectedByPath) => {
    if (typeof value === "number") return format(value);
    if (selectedByPath && typeof value === "string" && NUMERIC_TEXT.test(value.trim())) return format(Number(value.trim()));
    return undefined;
  };
}

// ---- dates ----------------------------------------------------------------------------------------

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
/** Epoch numbers below this are seconds (up to the year 5138), larger ones milliseconds. */
const EPOCH_SECONDS_BELOW = 1e11;

/** A date-only value is a calendar day: it is never shifted into another time zone. */
interface ParsedDate {
  time: number;
  dateOnly: boolean;
}

export function parseIsoDate(text: string): ParsedDate | undefined {
  const match = ISO_8601.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, , , offset] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) return undefined; // 2024-02-30
  if (hour === undefined) return { time: calendar.getTime(), dateOnly: true };
  // without an offset the time is UTC, never the server's zone
  let iso = text.trim().replace(" ", "T").replace(",", ".");
  if (offset === undefined) iso += "Z";
  else if (/^[+-]\d{2}$/.test(offset)) iso += ":00";
  const time = new Date(iso).getTime();
  return Number.isNaN(time) ? undefined : { time, dateOnly: false };
}

function dateFormatter(group: NonNullable<FormatValuesConfig["dates"]>): Formatter {
  checkLocale(group.locale, "dates/locale");
  // built once per run; a calendar day (date-only input) is read in UTC so that it never shifts
  let zoned: Intl.DateTimeFormat;
  try {
    zoned = new Intl.DateTimeFormat("en-US", { timeZone: group.timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  } catch {
    throw new UtilityConfigError("dates/timeZone", `'${group.timeZone}' is not an IANA time zone (e.g. UTC, Europe/Paris)`);
  }
  const utcDay = (time: number) => new Date(time).toISOString().slice(0, 10);
  const zonedDay = (time: number) => {
    const parts = zoned.formatToParts(time);
    const part = (type: string) => parts.find((candidate) => candidate.type === type)!.value;
    return `${part("year")}-${part("month")}-${part("day")}`;
  };
  const dayOfInstant = group.timeZone === "UTC" ? utcDay : zonedDay;
  const localeInstant = new Intl.DateTimeFormat(group.locale, { dateStyle: "medium", timeStyle: "short", timeZone: group.timeZone });
  const localeCalendar = new Intl.DateTimeFormat(group.locale, { dateStyle: "medium", timeZone: "UTC" });
  const formats: Record<NonNullable<FormatValuesConfig["dates"]>["format"], (date: ParsedDate) => unknown> = {
    iso: (date) => new Date(date.time).toISOString(),
    date: (date) => (date.dateOnly ? utcDay : dayOfInstant)(date.time),
    "epoch-ms": (date) => date.time,
    "epoch-s": (date) => Math.floor(date.time / 1000),
    locale: (date) => (date.dateOnly ? localeCalendar : localeInstant).format(date.time),
  };
  const format = formats[group.format];
  return (value, selectedByPath) => {
    if (typeof value === "string") {
      const parsed = parseIsoDate(value);
      return parsed && format(parsed);
    }
    if (selectedByPath && typeof value === "number" && Number.isFinite(value)) {
      const time = Math.abs(value) < EPOCH_SECONDS_BELOW ? value * 1000 : value;
      if (Number.isNaN(new Date(time).getTime())) return undefined;
      return format({ time, dateOnly: false });
    }
    return undefined;
  };
}

// ---- booleans -------------------------------------------------------------------------------------

const BOOLEAN_TEXT = new Map<string, boolean>([
  ["true", true],
  ["yes", true],
  ["1", true],
  ["y", true],
  ["false", false],
  ["no", false],
  ["0", false],
  ["n", false],
]);

function booleanFormatter(group: NonNullable<FormatValuesConfig["booleans"]>): Formatter {
  const format = {
    boolean: (flag: boolean) => flag,
    "yes-no": (flag: boolean) => (flag ? "yes" : "no"),
    number: (flag: boolean) => (flag ? 1 : 0),
    string: (flag: boolean) => String(flag),
  }[group.as];
  return (value, selectedByPath) => {
    if (typeof value === "boolean") return format(value);
    if (!selectedByPath) return undefined;
    const flag =
      typeof value === "string" ? BOOLEAN_TEXT.get(value.trim().toLowerCase()) : value === 1 ? true : value === 0 ? false : undefined;
    return flag === undefined ? undefined : format(flag);
  };
}

// ---- the walk -------------------------------------------------------------------------------------

interface ActiveGroup {
  name: "dates" | "numbers" | "booleans" | "strings";
  format: Formatter;
  /** index into the path sets, or -1: the group applies to every value of its type */
  pathSet: number;
  /** without paths, the values it takes: `dates` only ISO 8601 strings */
  takes: (value: unknown) => boolean;
}

export function formatValues(primary: unknown, config: FormatValuesConfig, budget = unlimitedBudget()): unknown {
  const pathSets: PathSet[] = [];
  const groups: ActiveGroup[] = [];
  const add = (name: ActiveGroup["name"], group: Group | undefined, build: () => Formatter, takes: ActiveGroup["takes"]) => {
    if (!group) return;
    const format = build();
    let pathSet = -1;
    if (group.paths) {
      pathSet = pathSets.length;
      pathSets.push(new PathSet(parsePaths(group.paths, `${name}/paths`)));
    }
    groups.push({ name, format, pathSet, takes });
  };
  // the order in which groups claim a value: dates before strings, so that a date string is a date
  add(
    "dates",
    config.dates,
    () => dateFormatter(config.dates!),
    (value) => typeof value === "string" && parseIsoDate(value) !== undefined,
  );
  add(
    "numbers",
    config.numbers,
    () => numberFormatter(config.numbers!),
    (value) => typeof value === "number",
  );
  add(
    "booleans",
    config.booleans,
    () => booleanFormatter(config.booleans!),
    (value) => typeof value === "boolean",
  );
  add(
    "strings",
    config.strings,
    () => stringFormatter(config.strings),
    (value) => typeof value === "string",
  );
  const byPath = groups.filter((group) => group.pathSet >= 0);
  const byType = groups.filter((group) => group.pathSet < 0);

  const formatLeaf = (value: unknown, selected: readonly boolean[]): unknown => {
    for (const group of byPath) {
      if (!selected[group.pathSet]) continue;
      const formatted = group.format(value, true);
      if (formatted !== undefined) return charged(value, formatted);
    }
    const group = byType.find((candidate) => candidate.takes(value));
    return group ? charged(value, group.format(value, false) ?? value) : value;
  };
  const charged = (value: unknown, formatted: unknown): unknown => {
    if (typeof formatted === "string") {
      const added = formatted.length - (typeof value === "string" ? value.length : 1);
      if (added > 0) budget.charge(added);
    }
    return formatted;
  };
  return mapRecords(primary, (record) => mapLeaves(record, pathSets, formatLeaf));
}

export default defineUtility({
  id,
  name: "Format values",
  category: "cleanup",
  description:
    "Formats strings (case, trim, whitespace), numbers (rounding, locale, currency, percent), dates (ISO, date, epoch, locale) and booleans (yes/no, 1/0, text), everywhere or at given paths, record by record.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return formatValues(inputs.primary, config, budget);
  },
});
