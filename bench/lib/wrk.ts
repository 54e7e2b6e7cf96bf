/**
 * HTTP load with wrk (C, one thread), so the load generator takes as little of the two cores as
 * possible from the server under test. Every run is bounded by duration and connection count; a Lua
 * script cycles through the given paths and reports its figures as JSON.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchDataDir } from "./data";
import { cpuSeconds } from "./servers";

export interface LoadSpec {
  /** e.g. http://127.0.0.1:3000 */
  base: string;
  method: "GET" | "POST" | "PUT";
  /** requests cycle through these paths, one after the other */
  paths: string[];
  key: string;
  /** a file holding the request body (sent as application/json) */
  bodyFile?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** responses outside 2xx/3xx plus socket errors: a run with any is not a valid figure */
  errors: number;
}

const lua = (spec: LoadSpec) => `
local paths = { ${spec.paths.map((path) => JSON.stringify(path)).join(", ")} }
local index = 0
wrk.method = "${spec.method}"
wrk.headers["Authorization"] = "Bearer ${spec.key}"
${
  spec.bodyFile
    ? `wrk.headers["Content-Type"] = "application/json"
local file = assert(io.open(${JSON.stringify(spec.bodyFile)}, "rb"))
wrk.body = file:read("*a")
file:close()`
    : ""
}
request = function()
  index = index % #paths + 1
  return wrk.format(nil, paths[index])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"durationUs":%d,"p50":%d,"p99":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status + e.connect + e.read + e.write + e.timeout))
end
`;

let scripts = 0;

function wrkArgs(spec: LoadSpec): string[] {
  const folder = join(benchDataDir(), "wrk");
  mkdirSync(folder, { recursive: true });
  const script = join(folder, `load-${process.pid}-${scripts++}.lua`);
  writeFileSync(script, lua(spec));
  return ["wrk", "-t1", `-c${spec.connections}`, `-d${spec.seconds}s`, "--timeout", "30s", "-s", script, spec.base];
}

function figures(stdout: string, stderr: string): LoadResult {
  const line = stdout.split("\n").find((text) => text.startsWith("WRK_JSON "));
  if (!line) throw new Error(`wrk gave no figures: ${stderr || stdout}`);
  const raw = JSON.parse(line.slice("WRK_JSON ".length)) as {
    requests: number;
    durationUs: number;
    p50: number;
    p99: number;
    errors: number;
  };
  return {
    requests: raw.requests,
    rps: raw.requests / (raw.durationUs / 1e6),
    p50Ms: raw.p50 / 1000,
    p99Ms: raw.p99 / 1000,
    errors: raw.errors,
  };
}

export function load(spec: LoadSpec): LoadResult {
  const [command, ...args] = wrkArgs(spec);
  const result = spawnSync(command, args, { encoding: "utf8", timeout: (spec.seconds + 60) * 1000 });
  return figures(result.stdout, result.stderr);
}

/** Several wrk runs at once (one per server of a cluster, say), each with its own figures. */
export async function loadAtOnce(specs: LoadSpec[]): Promise<LoadResult[]> {
  return Promise.all(
    specs.map(async (spec) => {
      const proc = Bun.spawn(wrkArgs(spec), { stdout: "pipe", stderr: "pipe", timeout: (spec.seconds + 60) * 1000 });
      const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      await proc.exited;
      return figures(stdout, stderr);
    }),
  );
}

/** Per side, in the order the sides were given, what each round measured. */
export type RoundFigures = Map<string, { rps: number[]; cpuUs: number[] }>;

/**
 * Loads each side in turn for `seconds`, the order reversed every round so that a slow spell of the
 * machine falls on every side alike, and records each round's requests/s and the CPU time the side's
 * process spent per request (all its threads, user + system, from /proc). A failed request stops the run.
 */
export function alternatingRounds(
  sides: [name: string, server: { url: string; pid: number }][],
  spec: Omit<LoadSpec, "base" | "seconds">,
  rounds: number,
  seconds: number,
): RoundFigures {
  const measured: RoundFigures = new Map(sides.map(([name]) => [name, { rps: [], cpuUs: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, side] of round % 2 === 0 ? sides : sides.toReversed()) {
      const before = cpuSeconds(side.pid);
      const result = load({ ...spec, base: side.url, seconds });
      if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed of ${result.requests}`);
      measured.get(name)!.rps.push(result.rps);
      measured.get(name)!.cpuUs.push(((cpuSeconds(side.pid) - before) / result.requests) * 1e6);
    }
  }
  return measured;
}
