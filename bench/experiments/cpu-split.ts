/**
 * Where a documents request's CPU goes, Kiln against the bare baseline: the serving process, PostgreSQL
 * (every `postgres` process on the machine) and the machine as a whole, in µs per request, under wrk
 * (8 connections), rounds alternating, medians of the rounds. When a server's µs per request times its
 * rate comes to about one second a second, its one JavaScript thread is what bounds the rate, and
 * Kiln ÷ bare in requests/s follows bare ÷ Kiln in the server's CPU per request.
 *
 *   bun bench/experiments/cpu-split.ts [--case get|list|create|replace] [--mode external|embedded] [--rounds 6] [--seconds 4] [--large]
 *
 * `--large`: first store a 1 MB and a 50 MB document through Kiln, as bench/documents.ts seeds them.
 * `--threads`: also each kind of the serving process's threads (bench/lib/servers.ts, threadSeconds), in
 * µs per request: the JavaScript thread that serves, and the runtime's helpers beside it (JSC's collector
 * and compiler threads, its MarkedBlock warm-up thread), which take the machine's other core.
 */
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createBodyFile, documentText, MB, replaceBodyFile } from "../lib/data";
import { loadAverage, median } from "../lib/report";
import { api, cpuSeconds, createSmallDocuments, type Server, startBare, startKiln, stopAll, threadSeconds } from "../lib/servers";
import { ensureTool } from "../lib/tools";
import { type LoadSpec, load } from "../lib/wrk";

const { values } = parseArgs({
  options: {
    case: { type: "string", default: "get" },
    mode: { type: "string", default: "external" },
    rounds: { type: "string", default: "6" },
    seconds: { type: "string", default: "4" },
    large: { type: "boolean", default: false },
    threads: { type: "boolean", default: false },
  },
});

/** CPU seconds of all PostgreSQL processes (a backend that exits between the listing and the read is skipped). */
function postgresSeconds(): number {
  let seconds = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") seconds += cpuSeconds(Number(entry));
    } catch {}
  }
  return seconds;
}

/** CPU seconds the whole machine has spent busy (user, nice, system, irq, softirq). */
function machineSeconds(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq!) / 100;
}

ensureTool("wrk", "wrk");
try {
  const kiln = await startKiln(values.mode as "embedded" | "external");
  const bare = await startBare(kiln);
  const ids = await createSmallDocuments(kiln.url, kiln.key, (i) => `split-${i}`);
  if (values.large) {
    for (const bytes of [1 * MB, 50_000_000]) {
      const { id } = (await api(kiln.url, kiln.key, "POST", "/api/v1/documents", { name: `large-${bytes}`, content: [] })).document;
      const response = await fetch(`${kiln.url}/api/v1/documents/${id}/content`, {
        method: "PUT",
        headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" },
        body: documentText(bytes),
      });
      if (!response.ok) throw new Error(`seeding ${bytes} bytes: ${response.status}`);
    }
  }
  const createBody = createBodyFile("create-1kb.json");
  const replaceBody = replaceBodyFile("replace-1kb.json");
  const requests: Record<string, Omit<LoadSpec, "base" | "key" | "seconds">> = {
    get: { method: "GET", paths: ids.map((id) => `/api/v1/documents/${id}`), connections: 8 },
    list: { method: "GET", paths: ["/api/v1/documents?limit=50"], connections: 8 },
    create: { method: "POST", paths: ["/api/v1/documents"], bodyFile: createBody, connections: 8 },
    replace: { method: "PUT", paths: ids.map((id) => `/api/v1/documents/${id}/content`), bodyFile: replaceBody, connections: 8 },
  };
  const spec = { ...requests[values.case!]!, key: kiln.key, seconds: Number(values.seconds) };
  const sides: [string, Server][] = [
    ["kiln", kiln],
    ["bare", bare],
  ];
  for (const [, server] of sides) load({ ...spec, base: server.url, seconds: 10 }); // warm-up: JIT, pools
  const loadBefore = loadAverage();
  const measured = new Map(
    sides.map(([name]) => [
      name,
      {
        rps: [] as number[],
        server: [] as number[],
        postgres: [] as number[],
        machine: [] as number[],
        threads: new Map<string, number[]>(),
      },
    ]),
  );
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, server] of round % 2 === 0 ? sides : sides.toReversed()) {
      const before = {
        server: cpuSeconds(server.pid),
        postgres: postgresSeconds(),
        machine: machineSeconds(),
        threads: threadSeconds(server.pid),
      };
      const result = load({ ...spec, base: server.url });
      if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed of ${result.requests}`);
      const perRequest = (seconds: number) => (seconds / result.requests) * 1e6;
      const figures = measured.get(name)!;
      figures.rps.push(result.rps);
      figures.server.push(perRequest(cpuSeconds(server.pid) - before.server));
      figures.postgres.push(perRequest(postgresSeconds() - before.postgres));
      figures.machine.push(perRequest(machineSeconds() - before.machine));
      for (const [kind, seconds] of threadSeconds(server.pid)) {
        const used = perRequest(seconds - (before.threads.get(kind) ?? 0));
        figures.threads.set(kind, [...(figures.threads.get(kind) ?? []), used]);
      }
    }
  }
  console.log(
    `${values.case}, ${values.mode} PostgreSQL, ${values.rounds} rounds of ${values.seconds} s; load average ${loadBefore.toFixed(2)}`,
  );
  for (const [name, figures] of measured) {
    console.log(
      `  ${name}: ${Math.round(median(figures.rps)).toLocaleString("en")}/s; µs of CPU a request: server ${median(figures.server).toFixed(1)}, ` +
        `PostgreSQL ${median(figures.postgres).toFixed(1)}, machine ${median(figures.machine).toFixed(1)}; ` +
        `server busy ${((median(figures.server) * median(figures.rps)) / 1e6).toFixed(2)} s a second`,
    );
    if (values.threads) {
      // a kind absent from a round (a thread that started later) counts 0 there
      const kinds = [...figures.threads].map(
        ([kind, used]) => [kind, median([...used, ...Array(figures.rps.length - used.length).fill(0)])] as const,
      );
      const shown = kinds.filter(([, used]) => used >= 0.1).toSorted((a, b) => b[1] - a[1]);
      console.log(`    threads, µs a request: ${shown.map(([kind, used]) => `${kind} ${used.toFixed(1)}`).join(", ")}`);
    }
  }
  const [ofKiln, ofBare] = [measured.get("kiln")!, measured.get("bare")!];
  console.log(
    `  Kiln ÷ bare: ${(median(ofKiln.rps) / median(ofBare.rps)).toFixed(2)}× requests/s; bare ÷ Kiln in server CPU: ${(median(ofBare.server) / median(ofKiln.server)).toFixed(2)}×`,
  );
  console.log(`load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`);
} finally {
  await stopAll();
}
