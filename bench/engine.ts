/**
 * `bun run bench:engine`: what the utility engine costs over calling the utility in-process.
 *
 * A real Kiln (`bun src/index.ts`, embedded PostgreSQL) listens on 127.0.0.1. For schema.clean-json on
 * generated records it measures, one request at a time over keep-alive fetch:
 *   - the median latency of a 1 KB run (inline) and of a 4 KB run (worker thread),
 *   - the throughput (MB/s of request body) of 1 MB runs, 4 in flight,
 * each next to the same work done directly in this process (JSON.parse, cleanJson, JSON.stringify),
 * and prints one table of ratios. Counts and time are bounded (BENCH_ENGINE_SECONDS per case, default 5).
 */

import { Value } from "@sinclair/typebox/value";
import { cleanJson, configSchema } from "../src/utilities/schema/clean-json";
import { KB, MB, recordsOfSize } from "./lib/data";
import { median } from "./lib/report";
import { startKiln, stopAll } from "./lib/servers";

const SECONDS = Number(process.env.BENCH_ENGINE_SECONDS ?? 5);
const MAX_RUNS = 2_000;
const config = Value.Default(configSchema, {}) as Parameters<typeof cleanJson>[1];

function bodyOfSize(bytes: number): string {
  const wrapper = JSON.stringify({ inputs: { primary: [] } }).length;
  return JSON.stringify({ inputs: { primary: recordsOfSize(bytes - wrapper) } });
}

/** Runs `once` until MAX_RUNS or SECONDS (after a short warm-up) and returns each run's milliseconds. */
async function timings(once: () => unknown): Promise<number[]> {
  for (let i = 0; i < 20; i++) await once();
  const samples: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  while (samples.length < MAX_RUNS && performance.now() < until) {
    const started = performance.now();
    await once();
    samples.push(performance.now() - started);
  }
  return samples;
}

function direct(body: string): () => string {
  return () => JSON.stringify(cleanJson((JSON.parse(body) as { inputs: { primary: unknown } }).inputs.primary, config));
}

async function main() {
  const kiln = await startKiln("embedded", { UTILITY_QUEUE_LIMIT: "64" });
  const url = `${kiln.url}/api/v1/utilities/schema.clean-json`;
  const overHttp = (body: string) => async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json", "accept-encoding": "identity" },
      body,
    });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    await response.arrayBuffer();
  };
  const rows: string[][] = [];

  for (const [label, bytes] of [
    ["1 KB run, median (inline)", 1 * KB],
    ["4 KB run, median (worker)", 4 * KB],
  ] as const) {
    const body = bodyOfSize(bytes);
    const http = median(await timings(overHttp(body)));
    const local = median(await timings(direct(body)));
    rows.push([label, `${http.toFixed(3)} ms`, `${local.toFixed(3)} ms`, `${(http / local).toFixed(1)}×`]);
  }

  const large = bodyOfSize(1 * MB);
  const inFlight = 4;
  const httpBatch = await timings(() => Promise.all(Array.from({ length: inFlight }, overHttp(large))));
  const localRun = await timings(direct(large));
  const httpMBps = (inFlight * large.length) / MB / (median(httpBatch) / 1000);
  const localMBps = large.length / MB / (median(localRun) / 1000);
  rows.push([
    `1 MB runs, throughput (worker, ${inFlight} in flight)`,
    `${httpMBps.toFixed(1)} MB/s`,
    `${localMBps.toFixed(1)} MB/s`,
    `${(localMBps / httpMBps).toFixed(2)}× slower`,
  ]);

  const header = ["case", "Kiln over HTTP", "direct call, one process", "ratio"];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => row[i].length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`;
  console.log([line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n"));
}

try {
  await main();
} finally {
  await stopAll();
}
