/**
 * What a piece of per-request work costs a server under load, against what the same piece costs in a
 * loop. One process serves the bare baseline's handler (bench/baseline/server.ts) on several ports; each
 * port first runs one piece of work in process, then answers as bare does:
 *
 * - `bare`: nothing before;
 * - `+ a Request and a Response`: a Request made, a JSON Response made and read;
 * - `+ a one-route Elysia app`: an Elysia app whose one route returns an object, handling a Request;
 * - `+ Kiln's handler, query from memory`: Kiln's whole handler (createApp's `handle`) for get metadata,
 *   its document query answered from memory (bench/lib/stubbed-query.ts);
 *
 * and Kiln's own server beside them. wrk loads each in turn (get metadata, 8 connections), the order
 * reversed every round; each round records the serving process's CPU per request. Before the load, the
 * serving process times each piece in a loop (best of 6 rounds), so the two figures for the same code
 * sit side by side.
 *
 *   bun bench/experiments/path-under-load.ts [--rounds 6] [--seconds 3] [--mode external|embedded]
 *
 * Started with PATH_UNDER_LOAD_PORTS set, this file is that serving process instead.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Elysia } from "elysia";
import { freePort } from "../../tests/support/server";
import { dataPath } from "../lib/data";
import { bestCpuPerCall, loadAverage, median } from "../lib/report";
import { cpuSeconds, createSmallDocuments, startKiln, startProcess, stopAll } from "../lib/servers";
import { answerFromMemory } from "../lib/stubbed-query";
import { ensureTool } from "../lib/tools";
import { load } from "../lib/wrk";

const PIECES = ["+ a Request and a Response", "+ a one-route Elysia app", "+ Kiln's handler, query from memory"] as const;

if (process.env.PATH_UNDER_LOAD_PORTS) await serve();
else await compare();

async function serve(): Promise<void> {
  const { createApp } = await import("../../src/app");
  const { loadConfig } = await import("../../src/config");
  const { connect } = await import("../../src/db/client");
  const { createWorkerPool } = await import("../../src/engine/pool");
  const { FIND_ACTIVE } = await import("../../src/modules/documents/statements");
  const { createLogger } = await import("../../src/observability/logger");
  const { registry } = await import("../../src/utilities/registry");
  const env = process.env as Record<string, string>;
  env.CONTENT_DIR = join(env.DATA_DIR, "content");
  const config = loadConfig({ DATA_DIR: env.DATA_DIR, DATABASE_URL: env.DATABASE_URL, LOG_LEVEL: "error" });
  const database = connect(env.DATABASE_URL);
  const kiln = createApp({ config, database, workerPool: createWorkerPool(config, registry.module), logger: createLogger("error") });
  answerFromMemory(database, FIND_ACTIVE);
  const { handleBare } = await import("../baseline/server");

  const url = env.SAMPLE_URL;
  const headers = { authorization: `Bearer ${env.KEY}` };
  const answer = { success: true, document: { id: "doc_01a21c68-c125-77c5-b6d4-11827c36f0bf", name: "bench-1.json", tags: [] } };
  const oneRoute = new Elysia({ normalize: false }).get("/api/v1/documents/:id", () => answer);
  const pieces: Record<(typeof PIECES)[number], () => Promise<unknown>> = {
    "+ a Request and a Response": () => {
      const request = new Request(url, { headers });
      return new Response(JSON.stringify({ ...answer, method: request.method }), {
        headers: { "content-type": "application/json" },
      }).arrayBuffer();
    },
    "+ a one-route Elysia app": async () => (await oneRoute.handle(new Request(url, { headers }))).arrayBuffer(),
    "+ Kiln's handler, query from memory": async () => (await kiln.handle(new Request(url, { headers }))).arrayBuffer(),
  };
  const inLoop: Record<string, number> = {};
  for (const [name, piece] of Object.entries(pieces)) inLoop[name] = await bestCpuPerCall(piece, 20_000, 6);
  writeFileSync(env.IN_LOOP_FILE, JSON.stringify(inLoop));
  const ports = env.PATH_UNDER_LOAD_PORTS.split(",").map(Number);
  Bun.serve({ port: ports[0], hostname: "127.0.0.1", fetch: handleBare });
  PIECES.forEach((name, index) => {
    const piece = pieces[name];
    Bun.serve({ port: ports[index + 1], hostname: "127.0.0.1", fetch: async (request) => (await piece(), handleBare(request)) });
  });
  Bun.serve({ port: Number(env.PORT), hostname: "127.0.0.1", fetch: () => new Response("ok") }); // startProcess waits for /health
}

async function compare(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "6" },
      seconds: { type: "string", default: "3" },
      mode: { type: "string", default: "external" },
    },
  });
  ensureTool("wrk", "wrk");
  try {
    const kiln = await startKiln(values.mode as "embedded" | "external");
    const ids = await createSmallDocuments(kiln.url, kiln.key, (i) => `p${i}`);
    const ports = [freePort(), ...PIECES.map(() => freePort())];
    const inLoopFile = dataPath("path-under-load-in-loop.json");
    const server = await startProcess("path under load", "experiments/path-under-load.ts", {
      PATH_UNDER_LOAD_PORTS: ports.join(","),
      DATABASE_URL: kiln.databaseUrl,
      DATA_DIR: kiln.dataDir,
      KEY: kiln.key,
      SAMPLE_URL: `http://127.0.0.1/api/v1/documents/${ids[0]}`,
      IN_LOOP_FILE: inLoopFile,
    });
    const inLoop = (await Bun.file(inLoopFile).json()) as Record<string, number>;
    const sides: [string, string, number][] = [
      ["bare", `http://127.0.0.1:${ports[0]}`, server.pid],
      ...PIECES.map((name, index): [string, string, number] => [name, `http://127.0.0.1:${ports[index + 1]}`, server.pid]),
      ["Kiln", kiln.url, kiln.pid],
    ];
    const spec = { method: "GET" as const, paths: ids.map((id) => `/api/v1/documents/${id}`), key: kiln.key, connections: 8 };
    for (const [, url] of sides) load({ ...spec, base: url, seconds: 6 }); // warm-up: JIT, pools
    const loadBefore = loadAverage();
    const cpu = new Map(sides.map(([name]) => [name, [] as number[]]));
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [name, url, pid] of round % 2 === 0 ? sides : sides.toReversed()) {
        const before = cpuSeconds(pid);
        const result = load({ ...spec, base: url, seconds: Number(values.seconds) });
        if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed of ${result.requests}`);
        cpu.get(name)!.push(((cpuSeconds(pid) - before) / result.requests) * 1e6);
      }
    }
    const bare = median(cpu.get("bare")!);
    console.log(`get metadata, ${values.mode} PostgreSQL, ${values.rounds} rounds of ${values.seconds} s, 8 connections`);
    for (const [name] of sides) {
      const perRequest = median(cpu.get(name)!);
      const added = name === "bare" ? "" : `, +${(perRequest - bare).toFixed(1)} µs over bare`;
      const loop = inLoop[name] === undefined ? "" : `; in a loop ${inLoop[name].toFixed(1)} µs`;
      console.log(`  ${name}: ${perRequest.toFixed(1)} µs CPU/request under load${added}${loop}`);
    }
    console.log(`load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`);
  } finally {
    await stopAll();
  }
}
