/**
 * Section "metrics": what GET /metrics costs the requests it measures. Two Kiln processes over one
 * database, one with METRICS_TOKEN (every request observed) and one without, take turns under the same
 * load on get metadata in many short back-to-back pairs. The figure is the server's CPU time per request
 * (from /proc), median over the pairs: on a shared, loaded machine requests per second mostly measure
 * the other work, CPU time per request much less so. Requests per second are shown beside it.
 * Even so, pairs scatter on a loaded machine; so the metrics layer is also timed alone, in process (the
 * same Elysia app with and without it, on a route that does nothing else), and that added CPU time is
 * set against get metadata's: the row with the target.
 */
import { Elysia } from "elysia";
import type { Database } from "../src/db/client";
import type { WorkerPool } from "../src/engine/pool";
import { metricsPlugin } from "../src/http/metrics";
import { createMetrics } from "../src/observability/metrics";
import { ms, rows, rps } from "./lib/report";
import { api, cpuSeconds, type KilnServer, startKiln } from "./lib/servers";
import { type LoadResult, load } from "./lib/wrk";
import type { Settings } from "./settings";

const TOKEN = "bench-metrics-token-0123456789";
const DOCUMENTS = 50;
const COST_TARGET = 0.05;

type Measured = LoadResult & { cpuUsPerRequest: number };

export async function benchMetrics(settings: Settings): Promise<void> {
  const off = await startKiln("embedded");
  const on = await startKiln("embedded", { DATABASE_URL: off.databaseUrl, METRICS_TOKEN: TOKEN });
  const paths: string[] = [];
  for (let i = 0; i < DOCUMENTS; i++) {
    const { document } = await api(off.url, off.key, "POST", "/api/v1/documents", {
      name: `m${i}.json`,
      content: { i, text: "metrics bench" },
    });
    paths.push(`/api/v1/documents/${document.id}`);
  }
  const measure = (server: KilnServer, seconds = 2) => {
    const cpuBefore = cpuSeconds(server.pid);
    const result = load({ base: server.url, key: off.key, method: "GET", paths, connections: 8, seconds });
    if (result.errors > 0) throw new Error(`metrics: ${result.errors} failed requests of ${result.requests}`);
    return { ...result, cpuUsPerRequest: ((cpuSeconds(server.pid) - cpuBefore) * 1e6) / result.requests };
  };
  measure(off, 2);
  measure(on, 2);
  const pairs: { off: Measured; on: Measured }[] = [];
  const rounds = settings.full ? 20 : 12;
  for (let round = 0; round < rounds; round++) {
    // alternate which one goes first, so neither always runs on the warmer (or busier) machine
    if (round % 2 === 0) {
      const offResult = measure(off);
      pairs.push({ off: offResult, on: measure(on) });
    } else {
      const onResult = measure(on);
      pairs.push({ on: onResult, off: measure(off) });
    }
  }
  const median = <T>(items: T[], by: (item: T) => number) => items.map(by).sort((a, b) => a - b)[Math.floor(items.length / 2)]!;
  const costs = pairs.map((pair) => pair.on.cpuUsPerRequest / pair.off.cpuUsPerRequest - 1);
  const scraped = await (await fetch(`${on.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  if (!scraped.includes('route="/api/v1/documents/:id",status="200"'))
    throw new Error("the metrics server did not count the load's requests");
  const cost = median(costs, (value) => value);
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  const sorted = [...costs].sort((a, b) => a - b);
  const getMetadataCpuUs = median(pairs, (pair) => pair.off.cpuUsPerRequest);
  const added = await pluginCpuUs(settings.full ? 30 : 16);
  rows.push({
    section: "metrics",
    case: `get metadata, METRICS_TOKEN set vs unset (median of ${rounds} pairs)`,
    kiln: `${median(pairs, (pair) => pair.on.cpuUsPerRequest).toFixed(0)} µs CPU/request · ${rps(median(pairs, (pair) => pair.on.rps))} · p50 ${ms(median(pairs, (pair) => pair.on.p50Ms))}`,
    reference: `without metrics: ${median(pairs, (pair) => pair.off.cpuUsPerRequest).toFixed(0)} µs CPU/request · ${rps(median(pairs, (pair) => pair.off.rps))} · p50 ${ms(median(pairs, (pair) => pair.off.p50Ms))}`,
    ratio: `CPU/request +${percent(cost)} (pairs: ${percent(sorted[0]!)} to ${percent(sorted.at(-1)!)})`,
  });
  rows.push({
    section: "metrics",
    case: "the metrics layer alone (in process, empty route) against get metadata's CPU/request",
    kiln: `+${added.toFixed(2)} µs CPU/request`,
    reference: `get metadata: ${getMetadataCpuUs.toFixed(0)} µs CPU/request`,
    ratio: `+${percent(added / getMetadataCpuUs)}`,
    target: `≤ ${COST_TARGET * 100} %`,
    met: added / getMetadataCpuUs <= COST_TARGET,
  });
  console.error(
    `bench: metrics end to end ${percent(cost)} CPU/request (median of ${rounds} pairs: ${costs.map(percent).join(", ")}); the layer alone +${added.toFixed(2)} µs of ${getMetadataCpuUs.toFixed(0)} µs`,
  );
  await on.stop();
  await off.stop();
}

/**
 * CPU microseconds the metrics layer adds to a request: the same app with and without it, a route that
 * does nothing, rounds alternating; the difference of the medians.
 */
async function pluginCpuUs(rounds: number): Promise<number> {
  const sources = {
    workerPool: { busy: 0, queued: 0, replacements: 0 } as unknown as WorkerPool,
    workerPoolSize: 1,
    database: { sql: { options: { max: 1 } }, ping: async () => true } as unknown as Database,
  };
  const app = (metrics: boolean) =>
    new Elysia()
      .use(metricsPlugin(metrics ? createMetrics(sources) : undefined, metrics ? TOKEN : undefined))
      .get("/api/v1/documents/:id", ({ params }) => ({ id: params.id }));
  const apps = { off: app(false), on: app(true) };
  const perRequest: Record<"on" | "off", number[]> = { on: [], off: [] };
  const requests = 20_000;
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
      const before = process.cpuUsage();
      for (let i = 0; i < requests; i++) await (await apps[side].handle(new Request(`http://kiln/api/v1/documents/doc_${i}`))).text();
      await Bun.sleep(1); // let the after-response hooks of the last requests run inside the window
      const used = process.cpuUsage(before);
      perRequest[side].push((used.user + used.system) / requests);
    }
  }
  const middle = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
  return Math.max(0, middle(perRequest.on) - middle(perRequest.off));
}
