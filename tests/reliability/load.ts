/**
 * Load and soak on loopback (issue 8 §4): `bun tests/reliability/load.ts [--seconds 60] [--clients 16]`.
 * Starts the real server (embedded PostgreSQL, or a fresh database on TEST_DATABASE_URL's server),
 * seeds several accounts, warms up, then runs a bounded mix of list, get, download, create, content
 * update and utility runs (inline and worker-sized) from several accounts until the deadline. Afterwards
 * every acknowledged write is read back. Exits 1 on any 5xx, any lost write, or an RSS at the end more
 * than 20% above the RSS after warm-up; prints requests/s and latency percentiles.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startRunServer } from "./support/run-server";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    clients: { type: "string", default: "16" },
    warmup: { type: "string", default: "10" },
  },
});
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const WARMUP_SECONDS = Number(values.warmup);
const ACCOUNTS = 4;

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

const run = await startRunServer({ LOG_LEVEL: "warn" });
const url = run.server.url;
const keys = await Promise.all(Array.from({ length: ACCOUNTS }, () => run.newKey()));
/** The last acknowledged content of every document a client wrote: read back at the end. */
const written = new Map<string, { key: string; hash: string }>();
const docsOf = new Map<string, string[]>(keys.map((key) => [key, []]));

const smallUtility = '{"inputs":{"primary":{"a":null,"b":" x ","c":[]}},"config":{"removeNulls":true,"trimStrings":true}}';
const workerUtility = `{"inputs":{"primary":[${Array.from({ length: 120 }, (_, i) => `{"id":${i},"name":"n${i}","none":null}`).join(",")}]},"config":{"removeNulls":true}}`;
const content = (seed: number) => JSON.stringify({ seed, items: Array.from({ length: 1 + (seed % 50) }, (_, i) => ({ i, v: seed * i })) });

interface Tally {
  latencies: number[];
  statuses: Map<number, number>;
  errors: number;
}
const tally = (): Tally => ({ latencies: [], statuses: new Map(), errors: 0 });

async function call(t: Tally | undefined, method: string, path: string, key: string, body?: string): Promise<Response | undefined> {
  const started = performance.now();
  try {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body,
    });
    const text = await response.text();
    if (t) {
      t.latencies.push(performance.now() - started);
      t.statuses.set(response.status, (t.statuses.get(response.status) ?? 0) + 1);
    }
    return new Response(text, { status: response.status, headers: response.headers });
  } catch {
    if (t) t.errors++;
    return undefined;
  }
}

let seed = 0;
async function client(index: number, deadline: number, t: Tally | undefined) {
  const key = keys[index % keys.length];
  const docs = docsOf.get(key)!;
  while (Date.now() < deadline) {
    const roll = Math.random();
    const doc = docs[Math.floor(Math.random() * docs.length)];
    if (roll < 0.1 || !doc) {
      const text = content(++seed);
      const response = await call(t, "POST", "/api/v1/documents", key, `{"name":"load-${seed}.json","content":${text}}`);
      if (response?.status === 201) {
        const id = ((await response.json()) as { document: { id: string } }).document.id;
        docs.push(id);
        written.set(id, { key, hash: sha256(text) });
      }
    } else if (roll < 0.2) {
      const text = content(++seed);
      const response = await call(t, "PUT", `/api/v1/documents/${doc}/content`, key, text);
      if (response?.status === 200) written.set(doc, { key, hash: sha256(text) });
    } else if (roll < 0.4) await call(t, "GET", "/api/v1/documents?limit=20", key);
    else if (roll < 0.55) await call(t, "GET", `/api/v1/documents/${doc}`, key);
    else if (roll < 0.75) await call(t, "GET", `/api/v1/documents/${doc}/content`, key);
    else if (roll < 0.92) await call(t, "POST", "/api/v1/utilities/schema.clean-json", key, smallUtility);
    else await call(t, "POST", "/api/v1/utilities/schema.clean-json", key, workerUtility);
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

try {
  for (const key of keys) {
    for (let i = 0; i < 10; i++) {
      const response = await call(undefined, "POST", "/api/v1/documents", key, `{"name":"seed.json","content":${content(i)}}`);
      if (response?.status === 201) docsOf.get(key)!.push(((await response.json()) as { document: { id: string } }).document.id);
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, Date.now() + WARMUP_SECONDS * 1000, undefined)));
  const rssAfterWarmup = rssOf(run.server.proc.pid);

  const t = tally();
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, Date.now() + SECONDS * 1000, t)));
  const elapsed = (performance.now() - started) / 1000;
  const rssAtEnd = rssOf(run.server.proc.pid);

  let lost = 0;
  for (const [id, { key, hash }] of written) {
    const response = await call(undefined, "GET", `/api/v1/documents/${id}/content`, key);
    if (response?.status !== 200 || sha256(await response.text()) !== hash) lost++;
  }
  const sorted = t.latencies.sort((a, b) => a - b);
  const serverErrors = [...t.statuses].filter(([status]) => status >= 500).reduce((sum, [, count]) => sum + count, 0);
  const rssGrowth = rssAtEnd / rssAfterWarmup - 1;
  const summary = {
    database: process.env.TEST_DATABASE_URL ? "external" : "embedded",
    seconds: Math.round(elapsed),
    clients: CLIENTS,
    accounts: ACCOUNTS,
    requests: sorted.length,
    requestsPerSecond: Math.round(sorted.length / elapsed),
    p50Ms: +percentile(sorted, 50).toFixed(1),
    p99Ms: +percentile(sorted, 99).toFixed(1),
    maxMs: +sorted.at(-1)!.toFixed(1),
    statuses: Object.fromEntries(t.statuses),
    connectionErrors: t.errors,
    serverErrors,
    writesVerified: written.size,
    lostWrites: lost,
    rssAfterWarmupMB: Math.round(rssAfterWarmup / 2 ** 20),
    rssAtEndMB: Math.round(rssAtEnd / 2 ** 20),
    rssGrowthPercent: +(rssGrowth * 100).toFixed(1),
  };
  console.log(`load: ${JSON.stringify(summary)}`);
  const failed = serverErrors > 0 || t.errors > 0 || lost > 0 || rssGrowth > 0.2;
  if (failed) console.log("load: FAILED (5xx, connection errors, lost writes or RSS growth over 20%)");
  process.exitCode = failed ? 1 : 0;
} finally {
  await run.close();
}
