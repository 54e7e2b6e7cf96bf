import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { documentsRepository } from "../../src/modules/documents/repository";
import { startSweepers } from "../../src/modules/documents/sweeper";
import { createMetrics } from "../../src/observability/metrics";
import { contentStoreIn } from "../../src/storage/disk";
import { importDocuments, waitForJob } from "../modules/jobs/support";
import { startRunServer } from "../reliability/support/run-server";
import { createTestApp, type TestApp } from "../support/app";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

const TOKEN = "metrics-token-0123456789abcdef";
const DOCS = "/api/v1/documents";

/** The value of one sample line, e.g. sample(text, 'kiln_x_count{a="b"}'); undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("without METRICS_TOKEN", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test("GET /metrics is a 404 like any unknown route, with or without a key or token", async () => {
    for (const key of [null, undefined, TOKEN]) {
      const response = await t.json("GET", "/metrics", { key });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("route_not_found");
    }
  });
});

describe("with METRICS_TOKEN", () => {
  let t: TestApp;
  const scrape = async () => {
    await Bun.sleep(20); // the measurement runs after the response went out (onAfterResponse)
    const response = await t.request("GET", "/metrics", { key: TOKEN });
    expect(response.status).toBe(200);
    return response.text();
  };
  beforeAll(async () => {
    t = await createTestApp({ METRICS_TOKEN: TOKEN, UTILITY_INLINE_MAX_BYTES: "64" });
  });
  afterAll(async () => {
    await t.close();
  });

  test("needs the token: none, an API key or a wrong token get 401", async () => {
    for (const key of [null, undefined, TOKEN + "x", TOKEN.slice(1)]) {
      const response = await t.json("GET", "/metrics", { key });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe("unauthorized");
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  test("the Bearer scheme in any case, as /api accepts it (RFC 9110 §11.1); the token in the query string is 400, never read", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer", "bEaReR"]) {
      const response = await t.request("GET", "/metrics", { key: null, headers: { authorization: `${scheme} ${TOKEN}` } });
      expect([scheme, response.status]).toEqual([scheme, 200]);
    }
    for (const authorization of [`Basic ${TOKEN}`, `Bearer${TOKEN}`, "Bearer "]) {
      expect((await t.request("GET", "/metrics", { key: null, headers: { authorization } })).status).toBe(401);
    }
    for (const key of [null, TOKEN]) {
      const query = await t.json("GET", `/metrics?access_token=${TOKEN}`, { key });
      expect(query.status).toBe(400);
      expect(query.body.code).toBe("token_in_query");
      expect(query.body.detail).toContain("Authorization");
      expect(JSON.stringify(query.body)).not.toContain(TOKEN);
    }
  });

  test("answers the Prometheus text format", async () => {
    const response = await t.request("GET", "/metrics", { key: TOKEN });
    expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await response.text();
    expect(text).toContain("# TYPE kiln_http_request_duration_seconds histogram");
    expect(sample(text, "kiln_database_up")).toBe(1);
    expect(sample(text, "kiln_database_pool_max_connections")).toBeGreaterThan(0);
    expect(sample(text, "kiln_database_pool_stalled_seconds")).toBe(0);
    expect(sample(text, "kiln_worker_pool_size")).toBe(t.config.utilityWorkers);
    expect(sample(text, "kiln_worker_pool_busy")).toBe(0);
    expect(sample(text, "kiln_worker_pool_queued")).toBe(0);
    expect(sample(text, "kiln_worker_pool_accounts_waiting")).toBe(0);
    expect(sample(text, 'kiln_worker_pool_refusals{limit="account_queue"}')).toBe(0);
    expect(sample(text, 'kiln_worker_pool_refusals{limit="pool_queue"}')).toBe(0);
  });

  test("counts requests by route template and status, never by raw path or id", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const created = await t.json("POST", DOCS, { key, body: { name: "m", content: { a: 1 } } });
    const id = created.body.document.id as string;
    for (let i = 0; i < 3; i++) expect((await t.request("GET", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect((await t.request("GET", `${DOCS}/${Bun.randomUUIDv7()}`, { key })).status).toBe(404);
    expect((await t.request("GET", "/no/such/path-7f3a", { key })).status).toBe(404);
    const text = await scrape();
    expect(sample(text, 'kiln_http_request_duration_seconds_count{method="GET",route="/api/v1/documents/:id",status="200"}')).toBe(3);
    expect(sample(text, 'kiln_http_request_duration_seconds_count{method="GET",route="/api/v1/documents/:id",status="404"}')).toBe(1);
    expect(sample(text, 'kiln_http_request_duration_seconds_count{method="POST",route="/api/v1/documents",status="201"}')).toBe(1);
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain(id);
    expect(text).not.toContain("path-7f3a");
    expect(sample(text, 'kiln_content_store_operations_total{operation="put"}')).toBeGreaterThanOrEqual(1);
  });

  test("counts utility runs by id and outcome, inline and in the worker pool, and pipelines as one run", async () => {
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    const small = { inputs: { primary: { a: { b: 1 } } } };
    const large = { inputs: { primary: { a: { b: "x".repeat(200) } } } };
    expect((await t.request("POST", "/api/v1/utilities/structure.flatten-nest", { key, body: small })).status).toBe(200);
    expect((await t.request("POST", "/api/v1/utilities/structure.flatten-nest", { key, body: large })).status).toBe(200);
    expect((await t.request("POST", "/api/v1/utilities/convert.json-to-csv", { key, body: { inputs: { primary: 5 } } })).status).toBe(400);
    // refused before it runs (no credit taken): not a run
    expect(
      (
        await t.request("POST", "/api/v1/utilities/structure.flatten-nest", {
          key,
          body: { inputs: { primary: 1 }, config: { nope: true } },
        })
      ).status,
    ).toBe(400);
    const pipeline = {
      steps: [{ utility: "convert.csv-to-json" }, { utility: "structure.pick-fields", config: { fields: ["a"] } }],
      inputs: { primary: "a,b\n1,2\n" },
    };
    expect((await t.request("POST", "/api/v1/pipelines/run", { key, body: pipeline })).status).toBe(200);
    const text = await scrape();
    expect(sample(text, 'kiln_utility_run_duration_seconds_count{utility="structure.flatten-nest",outcome="ok"}')).toBe(2);
    expect(sample(text, 'kiln_utility_run_duration_seconds_count{utility="convert.json-to-csv",outcome="utility_failed"}')).toBe(1);
    expect(text).not.toContain('outcome="validation_failed"');
    expect(sample(text, 'kiln_utility_run_duration_seconds_count{utility="pipeline",outcome="ok"}')).toBe(1);
  });

  test("counts the documents of jobs by kind and status, and the chunks running", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const ids = await importDocuments(t, key, 3, (i) => (i === 2 ? "not an object" : { e: `u${i}@example.com` }), "metered");
    const runner = t.app.jobs.runner({ pollMs: 50 }).start();
    try {
      const body = {
        source: { folder: "metered" },
        utility: "structure.pick-fields",
        config: { paths: ["e"] },
        output: { mode: "report" },
      };
      const created = await t.json("POST", "/api/v1/jobs", { key, body });
      const job = await waitForJob(t, key, created.body.job.id);
      expect(job.progress).toMatchObject({ total: ids.length, succeeded: 2, failed: 1 });
    } finally {
      await runner.stop();
    }
    const text = await scrape();
    expect(sample(text, 'kiln_job_documents_total{kind="utility",status="succeeded"}')).toBe(2);
    expect(sample(text, 'kiln_job_documents_total{kind="utility",status="failed"}')).toBe(1);
    expect(sample(text, "kiln_job_chunks_running")).toBe(0);
  });

  test("counts sweeper runs and the items they removed", async () => {
    const metrics = createMetrics({ workerPool: t.workerPool, workerPoolSize: 1, database: t.testDb.database });
    const logger = { log() {} };
    const sweepers = startSweepers({
      repository: documentsRepository(t.testDb.database.db),
      database: t.testDb.database,
      store: metrics.instrumentStore(contentStoreIn(t.config.dataDir)),
      now: Date.now,
      logger,
      intervalMs: 60_000,
      metrics,
    });
    await sweepers.stop();
    const text = await metrics.registry.metrics();
    expect(sample(text, 'kiln_sweeper_runs_total{kind="purge",outcome="ok"}')).toBe(1);
    expect(sample(text, 'kiln_sweeper_runs_total{kind="orphans",outcome="ok"}')).toBe(1);
    expect(sample(text, 'kiln_content_store_operations_total{operation="list"}')).toBe(1);
  });
});

test("the real server measures its sweepers and content store, and serves them on /metrics", async () => {
  const run = await startRunServer({ METRICS_TOKEN: TOKEN });
  try {
    const key = await run.newKey(["documents"]);
    const created = await fetch(`${run.server.url}${DOCS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "m.json", content: [1] }),
    });
    expect(created.status).toBe(201);
    await Bun.sleep(20);
    const response = await fetch(`${run.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(sample(text, 'kiln_sweeper_runs_total{kind="purge",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'kiln_content_store_operations_total{operation="put"}')).toBe(1);
    expect(sample(text, 'kiln_http_request_duration_seconds_count{method="POST",route="/api/v1/documents",status="201"}')).toBe(1);
  } finally {
    await run.close();
  }
});
