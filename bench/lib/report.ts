/**
 * The one table every section adds its rows to, printed as Markdown at the end of the run and, with
 * --readme, written into bench/README.md between its results markers.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";

export interface Row {
  section: string;
  case: string;
  kiln: string;
  /** the bare baseline, the in-process floor, or the bare handler */
  reference: string;
  /** jq or Miller, when one does the same task */
  peer?: string;
  ratio: string;
  target?: string;
  /** undefined when the row has no target */
  met?: boolean;
}

export const rows: Row[] = [];
export const notes: string[] = [];

/** The nearest-rank percentile, the one the reliability suite's server watch reports. */
export { percentile } from "../../tests/reliability/support/watch";

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * This process's CPU µs per call of `call` (awaited when it returns a promise), the best of `rounds`
 * rounds of `calls` calls after one warm-up round: on a shared machine interference only ever adds.
 */
export async function bestCpuPerCall(call: (i: number) => unknown, calls: number, rounds: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = -1; round < rounds; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      const made = call(i);
      if (made instanceof Promise) await made;
    }
    const used = process.cpuUsage(before);
    if (round >= 0) best = Math.min(best, (used.user + used.system) / calls);
  }
  return best;
}

export const ms = (value: number) =>
  value >= 100 ? `${Math.round(value).toLocaleString("en")} ms` : `${value.toFixed(value >= 10 ? 1 : 2)} ms`;
export const rps = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
export const times = (value: number) => `${value.toFixed(2)}×`;

export function table(): string {
  const header = ["section", "case", "Kiln", "baseline / floor", "peer", "ratio", "target", ""];
  const lines = [header, header.map(() => "---")].map((cells) => `| ${cells.join(" | ")} |`);
  for (const row of rows) {
    const mark = row.met === undefined ? "" : row.met ? "✓" : "✗";
    lines.push(`| ${[row.section, row.case, row.kiln, row.reference, row.peer ?? "", row.ratio, row.target ?? "", mark].join(" | ")} |`);
  }
  return lines.join("\n");
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return `${cpus().length} cores (${cpu.trim()}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, Bun ${Bun.version}`;
}

export function loadAverage(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}

const START = "<!-- bench:results:start -->";
const END = "<!-- bench:results:end -->";

export function writeReadme(text: string): void {
  const path = resolve(import.meta.dir, "../README.md");
  const readme = readFileSync(path, "utf8");
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`bench/README.md lacks the ${START} … ${END} markers`);
  writeFileSync(path, readme.slice(0, start + START.length) + "\n" + text + "\n" + readme.slice(end));
}
