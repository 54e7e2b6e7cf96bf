/**
 * RFC 4180 reading and writing, hand-written.
 *
 * Chosen over papaparse and csv-parse/csv-stringify by measurement (`bun bench/experiments/csv-candidates.ts`;
 * figures in bench/experiments/README.md): the fastest at both parsing and writing, and it does what the contract
 * needs in one pass: papaparse adds an empty row after a final line break, cannot trim only unquoted
 * cells, and takes the rest of the file as one cell after an unterminated quote (here a 400 naming the
 * line); csv-parse agrees on every tricky input the bench checks but is an order of magnitude slower.
 *
 * The parser scans with indexOf (the next delimiter and the next line feed are cached and looked up
 * again only once passed), so its cost is linear in the input.
 */
import { UtilityError } from "../types";

export interface CsvReadOptions {
  /** one character */
  delimiter: string;
  /** trim whitespace around unquoted cells (and around the quotes of quoted ones) */
  trim?: boolean;
  /** drop lines that hold nothing (a single empty, unquoted cell) */
  skipEmptyLines?: boolean;
}

const QUOTE = 34;
const SPACE = 32;
const TAB = 9;
const CR = 13;

/** Rows of cells. A leading BOM is ignored; CRLF and LF both end a row; a final line break adds no row. */
export function parseCsv(text: string, options: CsvReadOptions): string[][] {
  const { delimiter, trim = false, skipEmptyLines = false } = options;
  const length = text.length;
  const rows: string[][] = [];
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (pos >= length) return rows;

  let nextDelimiter = -1;
  let nextNewline = -1;
  /** end of the cell that starts at or after `from`: the nearer of the next delimiter and line feed */
  const cellEnd = (from: number): number => {
    if (nextDelimiter < from) {
      nextDelimiter = text.indexOf(delimiter, from);
      if (nextDelimiter === -1) nextDelimiter = length;
    }
    if (nextNewline < from) {
      nextNewline = text.indexOf("\n", from);
      if (nextNewline === -1) nextNewline = length;
    }
    return Math.min(nextDelimiter, nextNewline);
  };

  let row: string[] = [];
  let rowHasQuote = false;
  for (;;) {
    let cell: string;
    let quoteAt = pos;
    if (trim) while (quoteAt < length && isBlankAt(text, quoteAt, delimiter)) quoteAt++;
    if (text.charCodeAt(quoteAt) === QUOTE) {
      rowHasQuote = true;
      cell = "";
      let from = quoteAt + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) {
          throw new UtilityError(`unterminated quoted cell starting on line ${lineOf(text, quoteAt)}`);
        }
        if (text.charCodeAt(quote + 1) === QUOTE) {
          cell += text.slice(from, quote + 1);
          from = quote + 2;
          continue;
        }
        cell += text.slice(from, quote);
        pos = quote + 1;
        break;
      }
      // Text between the closing quote and the delimiter is not RFC 4180; keep it rather than lose it.
      const end = cellEnd(pos);
      let tail = text.slice(pos, end > pos && end === nextNewline && text.charCodeAt(end - 1) === CR ? end - 1 : end);
      if (trim) tail = tail.trim();
      cell += tail;
      pos = end;
    } else {
      const end = cellEnd(pos);
      cell = text.slice(pos, end > pos && end === nextNewline && text.charCodeAt(end - 1) === CR ? end - 1 : end);
      if (trim) cell = cell.trim();
      pos = end;
    }
    row.push(cell);

    if (pos < length && pos === nextDelimiter) {
      pos++;
      continue;
    }
    const empty = row.length === 1 && row[0] === "" && !rowHasQuote;
    if (!(empty && skipEmptyLines)) rows.push(row);
    row = [];
    rowHasQuote = false;
    pos++;
    if (pos >= length) return rows;
  }
}

function isBlankAt(text: string, at: number, delimiter: string): boolean {
  const code = text.charCodeAt(at);
  return (code === SPACE || code === TAB) && text[at] !== delimiter;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}

export const DETECTABLE_DELIMITERS = [",", ";", "\t", "|"] as const;
const SAMPLE_LINES = 20;

/**
 * The candidate that splits the first lines (outside quotes) into the same number of cells on every
 * line, the most cells winning; when none is consistent, the one seen most often; `,` by default.
 */
export function detectDelimiter(text: string): string {
  const counts: number[][] = [];
  let current = DETECTABLE_DELIMITERS.map(() => 0);
  let inQuotes = false;
  for (let at = 0; at < text.length && counts.length < SAMPLE_LINES; at++) {
    const char = text[at];
    if (char === '"') inQuotes = !inQuotes;
    else if (inQuotes) continue;
    else if (char === "\n") {
      if (current.some((count) => count > 0)) counts.push(current);
      current = DETECTABLE_DELIMITERS.map(() => 0);
    } else {
      const candidate = DETECTABLE_DELIMITERS.indexOf(char as (typeof DETECTABLE_DELIMITERS)[number]);
      if (candidate !== -1) current[candidate]++;
    }
  }
  if (current.some((count) => count > 0)) counts.push(current);
  if (counts.length === 0) return ",";

  let best = -1;
  let bestScore = 0;
  DETECTABLE_DELIMITERS.forEach((_, candidate) => {
    const perLine = counts.map((line) => line[candidate]);
    const consistent = perLine.every((count) => count === perLine[0]) && perLine[0] > 0;
    const total = perLine.reduce((sum, count) => sum + count, 0);
    // consistency outweighs any count; among equals, more cells per line wins
    const score = (consistent ? 1e9 : 0) + total;
    if (total > 0 && score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  });
  return best === -1 ? "," : DETECTABLE_DELIMITERS[best];
}

export interface CsvWriteOptions {
  delimiter: string;
  lineEnding: "\n" | "\r\n";
}

/**
 * How a cell is written: quoted, inner quotes doubled, when it holds the delimiter, a quote, CR or LF, or
 * starts with a BOM; as it is otherwise.
 */
export function csvQuoter(delimiter: string): (cell: string) => string {
  const needsQuotes = new RegExp(`[${escapeForCharClass(delimiter)}"\\r\\n]|^\\uFEFF`);
  return (cell) => (needsQuotes.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
}

/**
 * One row's line; a row that is one empty cell is written `""` so that it does not read back as an empty
 * line. Joined, not concatenated cell by cell: that would keep a rope node per cell until the output is
 * flattened, far more memory than the cells' bytes that the budget counts.
 */
export function csvLine(row: readonly string[], delimiter: string, quoted: (cell: string) => string): string {
  if (row.length === 1 && row[0] === "") return '""';
  const cells = new Array<string>(row.length);
  for (let column = 0; column < row.length; column++) cells[column] = quoted(row[column]);
  return cells.join(delimiter);
}

/** Rows joined by `lineEnding`, without a final line break, each as csvLine writes it. */
export function stringifyCsv(rows: readonly (readonly string[])[], options: CsvWriteOptions): string {
  const { delimiter, lineEnding } = options;
  const quoted = csvQuoter(delimiter);
  const lines = new Array<string>(rows.length);
  for (let index = 0; index < rows.length; index++) lines[index] = csvLine(rows[index], delimiter, quoted);
  return lines.join(lineEnding);
}

function escapeForCharClass(char: string): string {
  return char.replace(/[\\\][^-]/g, "\\$&");
}
