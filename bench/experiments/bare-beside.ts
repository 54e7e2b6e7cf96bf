/**
 * Is the gap on get metadata Kiln's request path, or the state of Kiln's process (its larger heap, its
 * background work, its database pool's other users)? One Kiln process also serves the bare baseline's
 * handler (bench/baseline/server.ts) on a second port, so two of the three sides share one process:
 *
 * - `kiln`: Kiln's own handler;
 * - `bare beside Kiln`: the bare handler in Kiln's process, beside Kiln (same heap, same background work);
 * - `bare`: the bare handler in its own process, as bench/documents.ts runs it.
 *
 * wrk loads each side in turn (get metadata, or with `--case list` a page of 50; 8 connections), the
 * order reversed every round; each round records the requests/s and the process's CPU time per request
 * (user + system from /proc: for the first two sides, the same process's).
 *
 *   bun bench/experiments/bare-beside.ts [--rounds 8] [--seconds 4] [--mode external|embedded] [--case get|list]
 *
 * Started with BARE_BESIDE_PORT set, this file is the server instead: Kiln's entry (src/index.ts), then
 * the bare handler on that port.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../../tests/support/server";
import { loadAverage, median } from "../lib/report";
import { createSmallDocuments, type Server, startBare, startKiln, stopAll } from "../lib/servers";
import { ensureTool } from "../lib/tools";
import { alternatingRounds, load } from "../lib/wrk";

if (process.env.BARE_BESIDE_PORT) {
  process.env.CONTENT_DIR = join(process.env.DATA_DIR!, "content");
  await import("../../src/index");
  const { handleBare } = await import("../baseline/server");
  Bun.serve({ port: Number(process.env.BARE_BESIDE_PORT), hostname: "127.0.0.1", fetch: handleBare });
} else {
  await compare();
}

async function compare(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "8" },
      seconds: { type: "string", default: "4" },
      mode: { type: "string", default: "external" },
      case: { type: "string", default: "get" },
    },
  });
  if (values.case !== "get" && values.case !== "list") throw new Error(`--case is get or list, not ${values.case}`);
  ensureTool("wrk", "wrk");
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  try {
    const besidePort = freePort();
    const kiln = await startKiln(values.mode as "embedded" | "external", { BARE_BESIDE_PORT: String(besidePort) }, import.meta.path);
    const sides: [string, Pick<Server, "url" | "pid">][] = [
      ["kiln", kiln],
      ["bare beside Kiln", { url: `http://127.0.0.1:${besidePort}`, pid: kiln.pid }],
      ["bare", await startBare(kiln)],
    ];
    const ids = await createSmallDocuments(kiln.url, kiln.key, (i) => `b${i}`);
    const paths = values.case === "list" ? ["/api/v1/documents?limit=50"] : ids.map((id) => `/api/v1/documents/${id}`);
    const spec = { method: "GET" as const, paths, key: kiln.key, connections: 8 };
    for (const [, side] of sides) load({ ...spec, base: side.url, seconds }); // warm-up: JIT, pools
    const loadBefore = loadAverage();
    const measured = alternatingRounds(sides, spec, rounds, seconds);
    console.log(
      `${values.case === "list" ? "list a page of 50" : "get metadata"}, ${values.mode} PostgreSQL, ${rounds} rounds of ${seconds} s, 8 connections; load average ${loadBefore.toFixed(2)}`,
    );
    for (const [name, { rps, cpuUs: us }] of measured) {
      console.log(
        `  ${name}: median ${Math.round(median(rps)).toLocaleString("en")}/s, ${median(us).toFixed(1)} µs CPU/request ` +
          `(rounds: ${rps.map((each) => Math.round(each)).join(", ")}/s; ${us.map((each) => each.toFixed(1)).join(", ")} µs)`,
      );
    }
    console.log(`load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`);
  } finally {
    await stopAll();
  }
}
