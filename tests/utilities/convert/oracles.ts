/**
 * json-to-csv as it was before its fast path (issue 39): every record copied into a Map of its flattened
 * cells, every row built as an array of cells and quoted by a second pass. Kept here only as the oracle
 * the fast path is compared with, byte for byte.
 */
import { type OutputBudget, unlimitedBudget } from "../../../src/utilities/budget";
import type { JsonToCsvConfig } from "../../../src/utilities/convert/json-to-csv";
import { ANY, get, isObject, type JsonObject, type Path, parsePaths } from "../../../src/utilities/shared/paths";
import { UtilityConfigError } from "../../../src/utilities/types";

const FORMULA_START = /^[=+\-@\t\r]/;

function flattenRecord(record: JsonObject): Map<string, unknown> {
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

function stringifyCsv(rows: readonly (readonly string[])[], delimiter: string, lineEnding: string): string {
  const needsQuotes = new RegExp(`[${delimiter.replace(/[\\\][^-]/g, "\\$&")}"\\r\\n]|^\\uFEFF`);
  return rows
    .map((row) =>
      row.length === 1 && row[0] === ""
        ? '""'
        : row.map((cell) => (needsQuotes.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell)).join(delimiter),
    )
    .join(lineEnding);
}

export function oldJsonToCsv(records: readonly JsonObject[], config: JsonToCsvConfig, budget: OutputBudget = unlimitedBudget()): string {
  const text = (value: unknown) => {
    const cell = cellText(value, config.escapeFormulas);
    budget.charge(cell.length + 1);
    return cell;
  };
  const rows: string[][] = [];
  if (config.columns) {
    const { columns } = config;
    const paths = columnPaths(columns);
    if (config.header) rows.push(columns.map(text));
    for (const record of records) {
      const flat = config.flatten ? flattenRecord(record) : null;
      rows.push(columns.map((column, index) => text(flat?.has(column) ? flat.get(column) : get(record, paths[index]))));
    }
  } else {
    const flattened = records.map((record) => (config.flatten ? flattenRecord(record) : new Map(Object.entries(record))));
    const names = new Set<string>();
    for (const cells of flattened) for (const name of cells.keys()) names.add(name);
    if (names.size === 0) return "";
    const columns = [...names];
    if (config.header) rows.push(columns.map(text));
    for (const cells of flattened) rows.push(columns.map((column) => text(cells.get(column))));
  }
  return stringifyCsv(rows, config.delimiter, config.lineEnding);
}
