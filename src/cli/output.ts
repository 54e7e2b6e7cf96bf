/**
 * What the CLI prints: tables for people, the API's JSON with --json, progress bars on stderr when it
 * is a terminal (never mixed into data written to that same terminal), and its inputs (a file or stdin).
 */
import { Presets, SingleBar } from "cli-progress";
import { CliError } from "./client";

export interface GlobalOptions {
  json?: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

/** Left-aligned columns separated by two spaces; cells are stringified, null shows as "-". */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  const cells = [columns, ...rows.map((row) => columns.map((column) => cellText(row[column])))];
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index]!.length)));
  for (const line of cells)
    process.stdout.write(line.map((cell, index) => (index === line.length - 1 ? cell : cell.padEnd(widths[index]!))).join("  ") + "\n");
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.join(",") || "-";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * A size in decimal units (1 kB = 1000 bytes, 1 GB = 10^9), the units the plans' limits are set in: a
 * 10 GB limit shows as "10 GB" (in binary units it was "9.3 GiB", which read as a different limit).
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = -1;
  // 999.95 rounds to 1000.0: that is the next unit's 1
  while (value >= 999.95 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${Number(value.toFixed(1))} ${units[unit]}`;
}

export function formatTime(epochMs: number | null | undefined): string {
  return epochMs === null || epochMs === undefined ? "-" : new Date(epochMs).toISOString().replace(/\.\d+Z$/, "Z");
}

export interface Progress {
  /** moves the bar to `done` (bytes or items); `extra` fills the bar's {detail} */
  update(done: number, detail?: string): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

/**
 * A bar on stderr when stderr is a terminal, unless the command writes its data to stdout and stdout
 * is that terminal too (a bar would garble it) or --json was asked for. `total` undefined: a counter.
 */
export function progress(label: string, options: { total?: number; bytes?: boolean; dataOnStdout?: boolean; json?: boolean }): Progress {
  if (!process.stderr.isTTY || options.json || (options.dataOnStdout && process.stdout.isTTY)) return SILENT;
  const show = (value: number) => (options.bytes ? formatBytes(value) : String(value));
  const format = options.total === undefined ? `${label} {done} {detail}` : `${label} [{bar}] {percentage}% {done}/{all} {detail}`;
  const bar = new SingleBar(
    { format, stream: process.stderr, hideCursor: true, clearOnComplete: false, barsize: 30, fps: 10 },
    Presets.shades_classic,
  );
  bar.start(options.total ?? 0, 0, { done: show(0), all: show(options.total ?? 0), detail: "" });
  return {
    update(done, detail = "") {
      bar.update(options.total === undefined ? 0 : Math.min(done, options.total), { done: show(done), detail });
    },
    stop() {
      bar.stop();
    },
  };
}

/** Passes the bytes through, reporting the running total. */
export function counted(stream: ReadableStream<Uint8Array>, onBytes: (total: number) => void): ReadableStream<Uint8Array> {
  let total = 0;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        onBytes(total);
        controller.enqueue(chunk);
      },
    }),
  );
}

/** A file's bytes, or stdin's for "-" (or no argument when stdin is not a terminal). */
export async function readInput(file: string | undefined, what: string): Promise<{ bytes: Uint8Array; name?: string }> {
  if (file === undefined || file === "-") {
    if (file === undefined && process.stdin.isTTY) throw new CliError(`${what}: give a FILE, or '-' to read stdin`, 2);
    return { bytes: new Uint8Array(await Bun.stdin.arrayBuffer()) };
  }
  const handle = Bun.file(file);
  if (!(await handle.exists())) throw new CliError(`${what}: no such file: ${file}`, 2);
  return { bytes: new Uint8Array(await handle.arrayBuffer()), name: file.split("/").pop() };
}

/** `--config '{"a":1}'` or `--config @file.json`: a JSON object. */
export async function jsonOption(value: string | undefined, option: string): Promise<Record<string, unknown> | undefined> {
  if (value === undefined) return undefined;
  let text = value;
  if (value.startsWith("@")) {
    const handle = Bun.file(value.slice(1));
    if (!(await handle.exists())) throw new CliError(`${option}: no such file: ${value.slice(1)}`, 2);
    text = await handle.text();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${option} is not valid JSON: ${(error as Error).message}`, 2);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new CliError(`${option} must be a JSON object`, 2);
  return parsed as Record<string, unknown>;
}

/** Writes to stdout and resolves once the bytes are handed over (so that pipes get everything before exit). */
export function writeStdout(data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(data, (error) => (error ? reject(error) : resolve())));
}
