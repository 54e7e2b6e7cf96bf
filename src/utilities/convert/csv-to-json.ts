/**
 * convert.csv-to-json: CSV text (RFC 4180, read by lib/csv.ts) to an array of objects, one per data row.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { detectDelimiter, parseCsv } from "../shared/csv";
import { ANY, formatPath, type JsonObject, type Path, PathSyntaxError, parsePath, set, setOwn } from "../shared/paths";
import { describeType } from "../shared/records";
import { defineUtility, UtilityError, type UtilityInputs } from "../types";

export const id = "convert.csv-to-json";

export const configSchema = t.Object(
  {
    delimiter: t.String({
      default: "auto",
      pattern: '^(auto|[^"\\r\\n])$',
      description: 'one character (not a quote or line break), or "auto" to detect among , ; tab |',
    }),
    header: t.Boolean({ default: true, description: "the first row names the keys; false: keys col_1, col_2, …" }),
    inferTypes: t.Boolean({
      default: true,
      description: "numbers (no leading zeros, within ±2^53) and true/false become JSON numbers and booleans",
    }),
    emptyAs: t.Union([t.Literal("string"), t.Literal("null"), t.Literal("omit")], {
      default: "string",
      description: 'what an empty cell becomes: "", null, or no key at all',
    }),
    trim: t.Boolean({ default: false, description: "trim whitespace around unquoted cells" }),
    skipEmptyLines: t.Boolean({ default: true, description: "lines holding nothing produce no record" }),
    nested: t.Boolean({ default: false, description: 'a header "a.b" (a path) builds { "a": { "b": … } }' }),
  },
  { additionalProperties: false },
);
export type CsvToJsonConfig = Static<typeof configSchema>;

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const OMIT = Symbol("omit");

function inferType(cell: string): string | number | boolean {
  if (cell === "true") return true;
  if (cell === "false") return false;
  if (!NUMBER.test(cell)) return cell;
  const number = Number(cell);
  // beyond 2^53 a JSON number no longer holds the digits that were written
  return Math.abs(number) > Number.MAX_SAFE_INTEGER || !Number.isFinite(number) ? cell : number;
}

/** `base`, or `base_2`, `base_3`, … when taken; the result is taken from then on. */
function uniqueKey(base: string, taken: Set<string>): string {
  let key = base;
  for (let suffix = 2; taken.has(key); suffix++) key = `${base}_${suffix}`;
  taken.add(key);
  return key;
}

/** Header names made usable as keys: empty ones become col_N (N their column), repeats get _2, _3, … */
function keyNames(header: readonly string[], taken: Set<string>): string[] {
  return header.map((name, column) => uniqueKey(name === "" ? `col_${column + 1}` : name, taken));
}

/** Header paths for `nested`; one that is a prefix of another (`a` and `a.b`) has no place to go. */
function headerPaths(names: readonly string[]): Path[] {
  const paths = names.map((name, column) => {
    try {
      // a star in a header is a character, not a wildcard
      return parsePath(name).map((segment) => (segment === ANY ? "*" : segment));
    } catch (error) {
      if (!(error instanceof PathSyntaxError)) throw error;
      throw new UtilityError(
        `header '${name}' (column ${column + 1}) is not a path: ${error.message}; use nested: false to keep it as a key`,
      );
    }
  });
  const owners = new Map<string, string>();
  const prefixes = new Map<string, string>();
  paths.forEach((path, column) => {
    for (let depth = 1; depth < path.length; depth++) prefixes.set(formatPath(path.slice(0, depth)), names[column]);
  });
  paths.forEach((path, column) => {
    const key = formatPath(path);
    const clash = prefixes.get(key) ?? owners.get(key);
    if (clash !== undefined) {
      throw new UtilityError(`headers '${names[column]}' and '${clash}' name the same place once nested; rename one or use nested: false`);
    }
    owners.set(key, names[column]);
  });
  return paths;
}

/**
 * Output bound: every row repeats the header's names as keys, so a long header over many short rows
 * makes the output far larger than the text; each row is charged to `budget` as it is built.
 */
export function csvToJson(text: string, config: CsvToJsonConfig, budget = unlimitedBudget()): JsonObject[] {
  const delimiter = config.delimiter === "auto" ? detectDelimiter(text) : config.delimiter;
  const rows = parseCsv(text, { delimiter, trim: config.trim, skipEmptyLines: config.skipEmptyLines });
  const taken = new Set<string>();
  const names = config.header && rows.length > 0 ? keyNames(rows[0], taken) : [];
  const paths = config.nested ? headerPaths(names) : [];
  const headerWidth = names.length;
  // a row longer than the header names its extra cells col_N (N its column), kept unique
  const extraKey = (column: number): string => {
    while (names.length <= column) {
      const key = uniqueKey(`col_${names.length + 1}`, taken);
      names.push(key);
      paths.push([key]);
    }
    return names[column];
  };

  const cellValue = (cell: string): unknown => {
    if (cell === "") return config.emptyAs === "string" ? "" : config.emptyAs === "null" ? null : OMIT;
    return config.inferTypes ? inferType(cell) : cell;
  };

  const records: JsonObject[] = [];
  for (let index = config.header ? 1 : 0; index < rows.length; index++) {
    const row = rows[index];
    const record: JsonObject = {};
    const width = Math.max(row.length, headerWidth);
    let rowBytes = 2;
    for (let column = 0; column < width; column++) {
      const key = column < names.length ? names[column] : extraKey(column);
      const cell = column < row.length ? row[column] : "";
      const value = cellValue(cell);
      if (value === OMIT) continue;
      rowBytes += key.length + cell.length + 6;
      if (config.nested) set(record, paths[column], value);
      else setOwn(record, key, value);
    }
    budget.charge(rowBytes);
    records.push(record);
  }
  return records;
}

export default defineUtility({
  id,
  name: "CSV to JSON",
  category: "convert",
  description:
    "Reads CSV text (RFC 4180: quoted cells, doubled quotes, CRLF or LF, BOM ignored) into an array of objects, one per row, keyed by the header.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    if (typeof inputs.primary !== "string") {
      throw new UtilityError(`${id} takes CSV text: primary must be a string, not ${describeType(inputs.primary)}`);
    }
    return csvToJson(inputs.primary, config, budget);
  },
});
