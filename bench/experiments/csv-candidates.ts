/**
 * Which CSV reader/writer should the convert utilities use? Measures parse and stringify of a
 * generated ~10 MB CSV (quoted cells, doubled quotes, embedded newlines, CRLF) with:
 *   - the hand-written RFC 4180 code in src/utilities/shared/csv.ts
 *   - papaparse (a dependency)
 *   - csv-parse / csv-stringify, when importable: they are not dependencies, so install them
 *     outside the project and point CSV_PARSE_DIR at that node_modules folder, e.g.
 *       (mkdir -p /tmp/csvbench && cd /tmp/csvbench && bun add csv-parse csv-stringify)
 *       CSV_PARSE_DIR=/tmp/csvbench/node_modules bun bench/experiments/csv-candidates.ts
 * and first checks that every candidate reads the tricky inputs the same way.
 *
 * Run: bun bench/experiments/csv-candidates.ts   (SIZE_MB=10 by default; best of RUNS=5)
 */
import Papa from "papaparse";
import { parseCsv, stringifyCsv } from "../../src/utilities/shared/csv";
import { bestOf } from "../lib/best-of";

type Rows = string[][];
interface Candidate {
  name: string;
  parse(text: string): Rows;
  stringify(rows: Rows): string;
}

const candidates: Candidate[] = [
  {
    name: "hand-written",
    parse: (text) => parseCsv(text, { delimiter: "," }),
    stringify: (rows) => stringifyCsv(rows, { delimiter: ",", lineEnding: "\n" }),
  },
  {
    name: "papaparse",
    parse: (text) => {
      const result = Papa.parse<string[]>(text, { delimiter: ",", skipEmptyLines: false });
      if (result.errors.length > 0) throw new Error(result.errors[0].message);
      return result.data;
    },
    stringify: (rows) => Papa.unparse(rows, { newline: "\n" }),
  },
];

const csvParseDir = process.env.CSV_PARSE_DIR;
if (csvParseDir) {
  const { parse } = await import(`${csvParseDir}/csv-parse/dist/esm/sync.js`);
  const { stringify } = await import(`${csvParseDir}/csv-stringify/dist/esm/sync.js`);
  candidates.push({
    name: "csv-parse/stringify",
    parse: (text) => parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false }),
    // csv-stringify ends the last record with a line break; drop it to compare like with like
    stringify: (rows) => (stringify(rows, { record_delimiter: "unix" }) as string).replace(/\n$/, ""),
  });
}

// --- agreement on tricky inputs -------------------------------------------------------------------
const tricky: Array<[string, string, Rows]> = [
  [
    "doubled quotes",
    'a,b\n"say ""hi""",2',
    [
      ["a", "b"],
      ['say "hi"', "2"],
    ],
  ],
  [
    "CRLF",
    "a,b\r\n1,2\r\n",
    [
      ["a", "b"],
      ["1", "2"],
    ],
  ],
  [
    "BOM",
    "\uFEFFa,b\n1,2",
    [
      ["a", "b"],
      ["1", "2"],
    ],
  ],
  [
    "embedded newline",
    'a,b\n"line1\nline2",x',
    [
      ["a", "b"],
      ["line1\nline2", "x"],
    ],
  ],
  ["embedded CRLF", 'a\r\n"x\r\ny"\r\n', [["a"], ["x\r\ny"]]],
  ["quoted delimiter", '"1,5",2', [["1,5", "2"]]],
  ["empty cells", ",,\n", [["", "", ""]]],
  ["quoted empty", '"",x', [["", "x"]]],
  ["ragged rows", "a,b,c\n1\n1,2,3,4", [["a", "b", "c"], ["1"], ["1", "2", "3", "4"]]],
];
console.log("agreement on tricky inputs:");
for (const candidate of candidates) {
  const failures: string[] = [];
  for (const [label, text, expected] of tricky) {
    try {
      const actual = candidate.parse(text);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) failures.push(`${label}: ${JSON.stringify(actual)}`);
    } catch (error) {
      failures.push(`${label}: threw ${(error as Error).message}`);
    }
  }
  console.log(`  ${candidate.name.padEnd(20)} ${failures.length === 0 ? "all agree" : failures.join("; ")}`);
}

// --- 10 MB ---------------------------------------------------------------------------------------
const sizeBytes = Number(process.env.SIZE_MB ?? 10) * 1024 * 1024;
const runs = Number(process.env.RUNS ?? 5);

let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const words = ["alpha", "beta", "gamma", "delta", "Zürich", "São Paulo", "naïve", "x"];
const word = () => words[Math.floor(random() * words.length)];

const rows: Rows = [["id", "name", "city", "note", "amount", "active"]];
let bytes = 0;
for (let id = 1; bytes < sizeBytes; id++) {
  const roll = random();
  const note = roll < 0.1 ? `he said "${word()}"` : roll < 0.15 ? `${word()}\n${word()}` : roll < 0.3 ? `${word()}, ${word()}` : word();
  const row = [String(id), `${word()} ${word()}`, word(), note, (random() * 10000).toFixed(2), random() < 0.5 ? "true" : "false"];
  rows.push(row);
  bytes += row.join(",").length + 2;
}
const text = stringifyCsv(rows, { delimiter: ",", lineEnding: "\r\n" });
console.log(`\ninput: ${(text.length / 1024 / 1024).toFixed(1)} MB, ${rows.length} rows, CRLF; best of ${runs} runs`);

const expected = JSON.stringify(rows);
for (const candidate of candidates) {
  const parsed = candidate.parse(text);
  const parseAgrees = JSON.stringify(parsed) === expected;
  const written = candidate.stringify(rows);
  const writeAgrees = JSON.stringify(parseCsv(written, { delimiter: "," })) === expected;
  const parseMs = bestOf(runs, () => candidate.parse(text));
  const stringifyMs = bestOf(runs, () => candidate.stringify(rows));
  console.log(
    `  ${candidate.name.padEnd(20)} parse ${parseMs.toFixed(0).padStart(5)} ms${parseAgrees ? "" : " (WRONG)"}` +
      `   stringify ${stringifyMs.toFixed(0).padStart(5)} ms${writeAgrees ? "" : " (WRONG)"}`,
  );
}
