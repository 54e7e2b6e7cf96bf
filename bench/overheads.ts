/**
 * Section 3: what the utility engine adds, on pick-fields. p50 of a 1 KB run (inline) and of a 4 KB run
 * (worker thread) against the bare handler (Bun.serve, JSON.parse, run, JSON.stringify on one thread),
 * each over one connection; the worker hand-off (the same 4 KB run on a Kiln that runs it inline); and 16 concurrent
 * 1 MB runs, where the pool's two workers should beat the bare handler's single thread.
 */

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { dataPath, KB, MB, recordsOfSize } from "./lib/data";
import { ms, rows, rps, times } from "./lib/report";
import { type KilnServer, type Server, startKiln } from "./lib/servers";
import { type LoadResult, load } from "./lib/wrk";
import type { Settings } from "./settings";

/**
 * A utility whose output cannot outgrow its input: one that can (find-replace, flatten, …) always runs in
 * a worker thread, so it would never show the inline path (docs/api.md, inline and worker runs).
 */
const UTILITY = "structure.pick-fields";

/** A pick-fields request body of about `bytes` bytes. */
function bodyFile(bytes: number): string {
  const path = dataPath(`engine-${bytes}.json`);
  const config = { paths: ["id", "name", "address.city"] };
  const wrapper = JSON.stringify({ inputs: { primary: [] }, config }).length;
  writeFileSync(path, JSON.stringify({ inputs: { primary: recordsOfSize(bytes - wrapper) }, config }));
  return path;
}

function run(server: Server, key: string, file: string, connections: number, seconds: number): LoadResult {
  const spec = { base: server.url, key, method: "POST" as const, paths: [`/api/v1/utilities/${UTILITY}`], bodyFile: file, connections };
  load({ ...spec, seconds: 1 });
  const result = load({ ...spec, seconds });
  if (result.errors > 0) throw new Error(`${server.name}: ${result.errors} failed utility runs of ${result.requests}`);
  return result;
}

/**
 * `ranLargeRuns`: whether the utilities section ran its 10 MB inputs on `kiln` before (the target holds
 * "on a fresh process and after the 10 MB runs"); a Kiln started here gives the fresh-process rows.
 */
export async function benchOverheads(settings: Settings, kiln: KilnServer, bare: Server, ranLargeRuns: boolean): Promise<void> {
  // The same Kiln code on the same database, with the inline threshold above 4 KB: the hand-off's reference.
  const inlineKiln = await startKiln("embedded", { DATABASE_URL: kiln.databaseUrl, UTILITY_INLINE_MAX_BYTES: String(64 * KB) });
  const freshKiln = await startKiln("embedded", { DATABASE_URL: kiln.databaseUrl });
  // 16 runs of one account at once: by default an account holds half the workers and queues 4 more runs
  // (429 beyond); this case measures the whole pool, so its one account may use every worker and wait 16 deep.
  const poolKiln = await startKiln("embedded", {
    DATABASE_URL: kiln.databaseUrl,
    // UTILITY_WORKERS defaults to the machine's parallelism
    UTILITY_WORKERS_PER_ACCOUNT: String(availableParallelism()),
    UTILITY_QUEUE_PER_ACCOUNT: "16",
  });
  try {
    const small = bodyFile(1 * KB);
    const medium = bodyFile(4 * KB);
    const seconds = settings.loadSeconds;
    const kilns: [string, KilnServer][] = [
      ["fresh process", freshKiln],
      ...(ranLargeRuns ? [["after the 10 MB runs", kiln] as [string, KilnServer]] : []),
    ];
    for (const [label, file, budgetMs] of [
      ["1 KB run p50 (inline)", small, 0.3],
      ["4 KB run p50 (worker)", medium, 1],
    ] as const) {
      for (const [state, server] of kilns) {
        const ofKiln = run(server, kiln.key, file, 1, seconds);
        const ofBare = run(bare, kiln.key, file, 1, seconds);
        const added = ofKiln.p50Ms - ofBare.p50Ms;
        rows.push({
          section: "engine",
          case: `${label}, ${state}`,
          kiln: ms(ofKiln.p50Ms),
          reference: `bare handler: ${ms(ofBare.p50Ms)}`,
          ratio: `+${ms(added)}`,
          target: `≤ bare + ${budgetMs} ms`,
          met: added <= budgetMs,
        });
        console.error(`bench: engine ${label}, ${state}: Kiln ${ms(ofKiln.p50Ms)}, bare ${ms(ofBare.p50Ms)}`);
      }
    }
    const viaWorker = run(kiln, kiln.key, medium, 1, seconds);
    const inline = run(inlineKiln, kiln.key, medium, 1, seconds);
    rows.push({
      section: "engine",
      case: "worker hand-off (4 KB)",
      kiln: `worker: ${ms(viaWorker.p50Ms)}`,
      reference: `inline: ${ms(inline.p50Ms)}`,
      ratio: `+${ms(viaWorker.p50Ms - inline.p50Ms)}`,
    });

    const large = bodyFile(1 * MB);
    // each run takes tens of milliseconds and 16 wait at once: a longer window gives a stable p99
    const ofKiln = run(poolKiln, kiln.key, large, 16, seconds * 3);
    const ofBare = run(bare, kiln.key, large, 16, seconds * 3);
    const describe = (result: LoadResult) => `${rps(result.rps)} · p99 ${ms(result.p99Ms)}`;
    rows.push({
      section: "engine",
      case: "16 concurrent 1 MB runs",
      kiln: describe(ofKiln),
      reference: `bare handler: ${describe(ofBare)}`,
      ratio: `${times(ofKiln.rps / ofBare.rps)} runs/s`,
    });
    console.error(`bench: engine 16 × 1 MB: Kiln ${describe(ofKiln)}, bare ${describe(ofBare)}`);
  } finally {
    await freshKiln.stop();
    await inlineKiln.stop();
    await poolKiln.stop();
  }
}

/**
 * The engine engineer's own micro-benchmark (bench/engine.ts: schema.clean-json over HTTP against the
 * direct call), run as it is, its Markdown rows folded into this table.
 */
export function benchEngineScript(settings: Settings): void {
  const result = spawnSync("bun", [resolve(import.meta.dir, "engine.ts")], {
    encoding: "utf8",
    env: { ...process.env, BENCH_ENGINE_SECONDS: String(settings.loadSeconds) },
    timeout: 300_000,
  });
  if (result.status !== 0) throw new Error(`bench/engine.ts failed: ${result.stderr.slice(-500)}`);
  const lines = result.stdout
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .slice(2);
  for (const line of lines) {
    const [label, kiln, direct, ratio] = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    rows.push({ section: "engine (bench/engine.ts)", case: `clean-json ${label}`, kiln, reference: `direct call: ${direct}`, ratio });
  }
}
