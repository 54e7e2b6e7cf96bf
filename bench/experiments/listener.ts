/**
 * What HTTP_LISTENER=node costs: two Kiln processes over one database, one listening with Bun.serve
 * (the default) and one with the node:http bridge (src/server/node-listener.ts), take turns under the
 * same wrk load on get metadata and create 1 KB; the order alternates by round. Prints each round's
 * requests/s, p50 and the server's CPU time per request (user + system from /proc, far less sensitive
 * to other work on the machine than the rates), their medians and the load average.
 *
 *   bun bench/experiments/listener.ts [--rounds 3] [--seconds 3] [--mode embedded|external]
 */
import { parseArgs } from "node:util";
import { createBodyFile } from "../lib/data";
import { loadAverage, median } from "../lib/report";
import { cpuSeconds, createSmallDocuments, type KilnServer, startKiln, stopAll } from "../lib/servers";
import { ensureTool } from "../lib/tools";
import { type LoadSpec, load } from "../lib/wrk";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "3" },
    mode: { type: "string", default: "embedded" },
  },
});
ensureTool("wrk", "wrk");
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);

interface Measured {
  rps: number;
  p50Ms: number;
  cpuUs: number;
}

function measure(server: KilnServer, key: string, spec: Omit<LoadSpec, "base" | "key" | "seconds">, time = seconds): Measured {
  const before = cpuSeconds(server.pid);
  const result = load({ ...spec, base: server.url, key, seconds: time });
  if (result.errors > 0) throw new Error(`${server.name}: ${result.errors} failed of ${result.requests}`);
  return { rps: result.rps, p50Ms: result.p50Ms, cpuUs: ((cpuSeconds(server.pid) - before) / result.requests) * 1e6 };
}

const line = (m: Measured) =>
  `${Math.round(m.rps).toLocaleString("en")}/s, p50 ${m.p50Ms.toFixed(2)} ms, ${m.cpuUs.toFixed(0)} µs CPU/request`;

try {
  const mode = values.mode as "embedded" | "external";
  const bun = await startKiln(mode, { HTTP_LISTENER: "bun" });
  const node = await startKiln(mode, { DATABASE_URL: bun.databaseUrl, HTTP_LISTENER: "node" });
  const key = bun.key;
  const ids = await createSmallDocuments(bun.url, key, (i) => `l${i}.json`);
  const createBody = createBodyFile("listener-create-1kb.json");
  const cases: { name: string; spec: Omit<LoadSpec, "base" | "key" | "seconds"> }[] = [
    { name: "get metadata", spec: { method: "GET", paths: ids.map((id) => `/api/v1/documents/${id}`), connections: 8 } },
    { name: "create 1 KB", spec: { method: "POST", paths: ["/api/v1/documents"], bodyFile: createBody, connections: 8 } },
  ];
  const loadBefore = loadAverage();
  console.log(
    `HTTP_LISTENER bun vs node, ${mode} PostgreSQL, ${rounds} rounds of ${seconds} s, 8 connections; load average ${loadBefore.toFixed(2)}`,
  );
  for (const testCase of cases) {
    for (const server of [bun, node]) measure(server, key, testCase.spec, 1); // warm-up
    const results = { bun: [] as Measured[], node: [] as Measured[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (["bun", "node"] as const) : (["node", "bun"] as const);
      for (const side of order) results[side].push(measure(side === "bun" ? bun : node, key, testCase.spec));
      console.log(
        `  ${testCase.name} round ${round + 1} (load ${loadAverage().toFixed(2)}): bun ${line(results.bun.at(-1)!)} | node ${line(results.node.at(-1)!)}`,
      );
    }
    const med = (side: "bun" | "node", field: keyof Measured) => median(results[side].map((m) => m[field]));
    console.log(
      `${testCase.name}: median bun ${Math.round(med("bun", "rps")).toLocaleString("en")}/s, ${med("bun", "cpuUs").toFixed(0)} µs CPU/request; ` +
        `node ${Math.round(med("node", "rps")).toLocaleString("en")}/s, ${med("node", "cpuUs").toFixed(0)} µs CPU/request; ` +
        `node ÷ bun ${(med("node", "rps") / med("bun", "rps")).toFixed(2)}× req/s, CPU/request +${(med("node", "cpuUs") - med("bun", "cpuUs")).toFixed(0)} µs (+${((med("node", "cpuUs") / med("bun", "cpuUs") - 1) * 100).toFixed(0)} %)`,
    );
  }
  console.log(`load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`);
} finally {
  await stopAll();
}
