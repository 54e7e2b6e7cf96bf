/**
 * CPU per request of Kiln's own pipeline against the bare baseline's, both called in this process
 * (no listener, no loopback, no load generator competing for the cores), one request at a time:
 *
 *   bun bench/request-cost.ts [--mode embedded|external] [--rounds 12] [--requests 2000] [--cases get,list,create] [--sql-stubbed]
 *
 * `--sql-stubbed`: Kiln's get metadata alone, its document query answered from memory with the row it
 * returned first (the cached key needs no query either): the CPU of Kiln's own pipeline, without
 * postgres.js, which a loaded machine disturbs far less than anything that waits on PostgreSQL.
 *
 * A Kiln server (bench/lib/servers.ts) migrates a database and makes an account without limits; this
 * process then builds Kiln's app (createApp, the handler the listener calls) over that database and
 * imports the bare handler (bench/baseline/server.ts, `handleBare`) over the same database and content
 * folder. Rounds alternate the two; each round times `--requests` sequential requests by this thread's
 * CPU time (user + system), so time spent waiting on PostgreSQL, and PostgreSQL's own work, count for
 * neither. The minimum over the rounds is the figure: on a machine shared with other work, interference
 * only ever adds to it. Kiln ÷ bare here overstates the gap seen over HTTP, where both also pay Bun.serve
 * and the sockets; the difference in µs is what Kiln's pipeline adds.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createDatabase } from "../src/db/client";
import { createWorkerPool } from "../src/engine/pool";
import { FIND_ACTIVE } from "../src/modules/documents/statements";
import { createLogger } from "../src/observability/logger";
import { registry } from "../src/utilities/registry";
import { dataPath, KB, recordsOfSize } from "./lib/data";
import { bestCpuPerCall } from "./lib/report";
import { startKiln, stopAll } from "./lib/servers";
import { answerFromMemory } from "./lib/stubbed-query";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "embedded" },
    rounds: { type: "string", default: "12" },
    requests: { type: "string", default: "2000" },
    cases: { type: "string", default: "get,list,create" },
    "sql-stubbed": { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const requests = Number(values.requests);

const kiln = await startKiln(values.mode as "embedded" | "external");
try {
  const config = loadConfig({ DATA_DIR: kiln.dataDir, DATABASE_URL: kiln.databaseUrl, LOG_LEVEL: "error" });
  const database = await createDatabase({ databaseUrl: kiln.databaseUrl, dataDir: kiln.dataDir });
  const workerPool = createWorkerPool(config, registry.module);
  const { handle } = createApp({ config, database, workerPool, logger: createLogger("error") });
  process.env.DATABASE_URL = kiln.databaseUrl;
  process.env.CONTENT_DIR = join(kiln.dataDir, "content");
  const { handleBare } = await import("./baseline/server");

  const base = "http://127.0.0.1";
  const headers = { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" };
  const createBody = JSON.stringify({ name: "created", content: recordsOfSize(1 * KB) });
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const response = await handle(new Request(`${base}/api/v1/documents`, { method: "POST", headers, body: createBody }));
    ids.push(((await response.json()) as { document: { id: string } }).document.id);
  }
  if (values["sql-stubbed"]) await kilnAlone(handle, database, new Request(`${base}/api/v1/documents/${ids[0]}`, { headers }));
  const cases: { name: string; request: (i: number) => Request }[] = [
    { name: "get metadata", request: (i) => new Request(`${base}/api/v1/documents/${ids[i % ids.length]}`, { headers }) },
    { name: "list a page of 50", request: () => new Request(`${base}/api/v1/documents?limit=50`, { headers }) },
    { name: "create 1 KB", request: () => new Request(`${base}/api/v1/documents`, { method: "POST", headers, body: createBody }) },
  ];
  const sides = { kiln: handle, bare: handleBare };
  const lines: string[] = [];
  const wanted = values["sql-stubbed"] ? [] : cases.filter((each) => values.cases!.split(",").some((name) => each.name.startsWith(name)));
  for (const { name, request } of wanted) {
    const perRequest: Record<keyof typeof sides, number[]> = { kiln: [], bare: [] };
    const count = name.startsWith("create") ? Math.ceil(requests / 10) : requests;
    for (let round = -1; round < rounds; round++) {
      for (const side of round % 2 === 0 ? (["kiln", "bare"] as const) : (["bare", "kiln"] as const)) {
        const before = process.cpuUsage();
        for (let i = 0; i < count; i++) {
          const response = await sides[side](request(i));
          if (response.status >= 300) throw new Error(`${side} ${name}: ${response.status} ${await response.text()}`);
          await response.arrayBuffer();
        }
        const used = process.cpuUsage(before);
        if (round >= 0) perRequest[side].push((used.user + used.system) / count); // round -1 warms up
      }
    }
    const best = (side: keyof typeof sides) => Math.min(...perRequest[side]);
    const median = (side: keyof typeof sides) => perRequest[side].toSorted((a, b) => a - b)[Math.floor(rounds / 2)];
    const line = `${name}: Kiln ${best("kiln").toFixed(1)} µs (median ${median("kiln").toFixed(1)}), bare ${best("bare").toFixed(1)} µs (median ${median("bare").toFixed(1)}): Kiln adds ${(best("kiln") - best("bare")).toFixed(1)} µs, ${(best("kiln") / best("bare")).toFixed(2)}× the bare CPU per request`;
    console.log(line);
    lines.push(line);
  }
  if (lines.length > 0) writeFileSync(dataPath("request-cost.txt"), `${lines.join("\n")}\n`);
  await database.close();
} finally {
  await stopAll();
}
process.exit(0);

/** Kiln's get metadata with its document query answered from memory: best CPU µs per request of 8 rounds. */
async function kilnAlone(handle: (request: Request) => Promise<Response>, database: { sql: unknown }, sample: Request): Promise<void> {
  answerFromMemory(database, FIND_ACTIVE);
  const again = () => new Request(sample.url, { headers: sample.headers });
  const best = await bestCpuPerCall(async () => (await handle(again())).arrayBuffer(), requests * 10, 8);
  console.log(`get metadata, document query answered from memory: Kiln ${best.toFixed(1)} µs CPU per request`);
}
