/**
 * convert.json-to-csv: an array of objects (or one object) to CSV text, written by lib/csv.ts.
 */

import type { Static } from "@sinclair/typebox";
import { Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { csvLine, csvQuoter } from "../shared/csv";
import { getOwn, hasOwn } from "../shared/own-members";
import { ANY, get, isObject, type JsonObject, type Path, parsePaths } from "../shared/paths";
import { describeType, objectRecord } from "../shared/records";
import { defineUtility, UtilityConfigError, UtilityError, type UtilityInputs } from "../types";

export const id = "convert.json-to-csv";

export const configSchema = t.Object(
  {
    delimiter: t.String({ default: ",", pattern: '^[^"\\r\\n]$', description: "one character (not a quote or line break)" }),
    columns: t.Optional(
      t.Array(t.String(), {
        minItems: 1,
        description: "the columns (paths) and their order; default: every key in first-seen order",
      }),
    ),
    header: t.Boolean({ default: true, description: "write a header row" }),
    flatten: t.Boolean({
      default: true,
      description: "nested objects become dotted columns (address.city); arrays are written as JSON text",
    }),
    lineEnding: t.Union([t.Literal("\n"), t.Literal("\r\n")], { default: "\n" }),
    escapeFormulas: t.Boolean({
      default: true,
      description: "prefix ' to text cells starting with = + - @, tab or CR (spreadsheet formula injection)",
    }),
  },
  { additionalProperties: false },
);
export type JsonToCsvConfig = Static<typeof configSchema>;

const FORMULA_START = /^[=+\-@\t\r]/;

/** Whether flattening leaves the record as it is: no member is an object with members. */
function isFlat(record: JsonObject): boolean {
  for (const key of Object.keys(record)) {
    const member = record[key];
    if (isObject(member) && Object.keys(member).length > 0) return false;
  }
  return true;
}

/**
 * The record's leaves under dotted names (keys joined with `.` as they are, not escaped, so flat keys
 * holding a dot keep their text). Arrays and empty objects are leaves. A flat record is its own cells
 * (the common case: no copy into a Map).
 */
function flattenRecord(record: JsonObject): Cells {
  if (isFlat(record)) return record;
  const cells = new Map<string, unknown>();
  const walk = (value: JsonObject, prefix: string) => {
    for (const key of Object.keys(value)) {
      const member = value[key];
      const name = prefix + key;
      if (isObject(member) && Object.keys(member).length > 0) walk(member, `${name}.`);
      else cells.set(name, member);
    }
  };
  walk(record, "");
  return cells;
}

/** A record's cells by column name: a flattened record's Map, or a record whose own members are its cells. */
type Cells = Map<string, unknown> | JsonObject;

const cellOf = (cells: Cells, name: string): unknown => (cells instanceof Map ? cells.get(name) : getOwn(cells, name));
const hasCell = (cells: Cells, name: string): boolean => (cells instanceof Map ? cells.has(name) : hasOwn(cells, name));
const namesOf = (cells: Cells): Iterable<string> => (cells instanceof Map ? cells.keys() : Object.keys(cells));

function cellText(value: unknown, escapeFormulas: boolean): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return escapeFormulas && FORMULA_START.test(value) ? `'${value}` : value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function columnPaths(columns: readonly string[]): Path[] {
  const paths = parsePaths(columns, "columns");
  paths.forEach((path, index) => {
    if (path.includes(ANY))
      throw new UtilityConfigError(`columns/${index}`, `column '${columns[index]}' has a wildcard; a column names one value`);
  });
  return paths;
}

/**
 * Output bound: every record gets a cell in every column, the union of all records' keys (n records
 * with a key each make n × n cells), and a column may name a large value again and again; each cell
 * is charged to `budget` as it is written.
 */
export function jsonToCsv(records: readonly JsonObject[], config: JsonToCsvConfig, budget = unlimitedBudget()): string {
  const { delimiter } = config;
  const quoted = csvQuoter(delimiter);
  const lines: string[] = [];
  const write = (row: string[]) => lines.push(csvLine(row, delimiter, quoted));
  // each cell charged as it is made: one row may hold as many cells as there are records
  const text = (value: unknown) => {
    const cell = cellText(value, config.escapeFormulas);
    budget.charge(cell.length + 1);
    return cell;
  };
  if (config.columns) {
    const { columns } = config;
    const paths = columnPaths(columns);
    if (config.header) write(columns.map(text));
    for (const record of records) {
      // with flatten, a column first names a flattened key as written (a flat key may hold a dot)
      const cells = config.flatten ? flattenRecord(record) : null;
      write(columns.map((column, index) => text(cells && hasCell(cells, column) ? cellOf(cells, column) : get(record, paths[index]))));
    }
  } else {
    const flattened = config.flatten ? records.map(flattenRecord) : records;
    const names = new Set<string>();
    for (const cells of flattened) for (const name of namesOf(cells)) names.add(name);
    if (names.size === 0) return "";
    const columns = [...names];
    if (config.header) write(columns.map(text));
    const row = new Array<string>(columns.length);
    for (const cells of flattened) {
      for (let column = 0; column < columns.length; column++) row[column] = text(cellOf(cells, columns[column]));
      write(row);
    }
  }
  return lines.join(config.lineEnding);
}

export default defineUtility({
  id,
  name: "JSON to CSV",
  category: "convert",
  description:
    "Writes an array of objects (or one object) as CSV text: one column per key or configured path, nested objects as dotted columns, formula injection escaped.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    const { primary } = inputs;
    if (!Array.isArray(primary) && !isObject(primary)) {
      throw new UtilityError(`${id} takes an object or an array of objects; primary is ${describeType(primary)}`);
    }
    const records = Array.isArray(primary) ? primary.map((record, index) => objectRecord(record, index, id)) : [primary];
    return jsonToCsv(records, config, budget);
  },
});
