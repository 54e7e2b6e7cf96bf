/** What a submission must name, and who may see a job: every problem is a 4xx before anything is queued. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp } from "./support";

let app: JobsTestApp;
let key: string;
let ids: string[];
beforeAll(async () => {
  // no runner: jobs stay queued
  app = await createJobsApp({}, { runner: false });
  ({ key } = await app.newAccount());
  ids = await importDocuments(app, key, 2, (i) => ({ n: i }), "box");
});
afterAll(async () => {
  await app.close();
});

const submit = (body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
  app.json("POST", "/api/v1/jobs", { key: options.key ?? key, body, headers: options.headers });
const valid = { source: { folder: "box" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "report" } };

describe("bad input is a 4xx at submission", () => {
  test.each([
    ["an unknown utility", { ...valid, utility: "no.such" }, 404, "utility_not_found"],
    ["a config that fails validation", { ...valid, config: { fields: "n" } }, 400, "validation_failed"],
    ["a folder with no documents", { ...valid, source: { folder: "empty" } }, 400, "job_source_empty"],
    ["a query source no index serves", { ...valid, source: { query: { folder: "box" } } }, 400, "query_needs_index"],
    ["no work", { source: valid.source, output: valid.output }, 400, "validation_failed"],
    ["two kinds of work", { ...valid, steps: [{ utility: "structure.pick-fields" }] }, 400, "validation_failed"],
    ["config without a utility", { ...valid, utility: undefined, steps: [{ utility: "structure.pick-fields" }] }, 400, "validation_failed"],
    ["an unknown step utility", { ...valid, utility: undefined, config: undefined, steps: [{ utility: "x.y" }] }, 400, "validation_failed"],
    ["an unknown pipeline", { ...valid, utility: undefined, config: undefined, pipelineId: "pip_nope" }, 404, "pipeline_not_found"],
    ["an unknown output mode", { ...valid, output: { mode: "print" } }, 400, "validation_failed"],
    ["saveAs without a folder", { ...valid, output: { mode: "saveAs" } }, 400, "validation_failed"],
    ["an unknown source", { ...valid, source: { bucket: "x" } }, 400, "validation_failed"],
    ["a bad onError", { ...valid, onError: "retry" }, 400, "validation_failed"],
    ["an unknown field", { ...valid, priority: 1 }, 400, "validation_failed"],
    [
      "too many documentIds",
      { ...valid, source: { documentIds: Array.from({ length: 10_001 }, (_, i) => `doc_${i}`) } },
      400,
      "validation_failed",
    ],
    ["a document that does not exist", { ...valid, source: { documentIds: ["doc_missing"] } }, 404, "document_not_found"],
  ])("%s", async (_what, body, status, code) => {
    const before = (await app.json("GET", "/api/v1/jobs", { key })).body.jobs.length;
    const response = await submit(body);
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(response.body.code).toBe(code);
    expect((await app.json("GET", "/api/v1/jobs", { key })).body.jobs.length).toBe(before);
  });

  test("more documents than JOBS_MAX_DOCUMENTS: 413", async () => {
    const small = await createJobsApp({ JOBS_MAX_DOCUMENTS: "1" }, { runner: false });
    try {
      const account = await small.newAccount();
      await importDocuments(small, account.key, 2, () => ({}), "two");
      const response = await small.json("POST", "/api/v1/jobs", { key: account.key, body: { ...valid, source: { folder: "two" } } });
      expect(response.status).toBe(413);
      expect(response.body.code).toBe("job_too_large");
    } finally {
      await small.close();
    }
  });
});

describe("permissions and tenants", () => {
  test("a key needs both utilities and documents", async () => {
    for (const permissions of [["utilities"], ["documents"]] as const) {
      const other = await app.newAccount({ permissions: [...permissions] });
      const response = await submit(valid, { key: other.key });
      expect(response.status).toBe(403);
      expect((await app.json("GET", "/api/v1/jobs", { key: other.key })).status).toBe(403);
    }
  });

  test("another account's jobs, documents and pipelines are not found", async () => {
    const created = await submit(valid);
    expect(created.status).toBe(202);
    const id = created.body.job.id;
    const other = await app.newAccount();
    for (const [method, path] of [
      ["GET", `/api/v1/jobs/${id}`],
      ["POST", `/api/v1/jobs/${id}/cancel`],
      ["GET", `/api/v1/jobs/${id}/results`],
    ] as const) {
      const response = await app.json(method, path, { key: other.key });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("job_not_found");
    }
    expect((await app.json("GET", "/api/v1/jobs", { key: other.key })).body.jobs).toEqual([]);
    const theirs = await submit({ ...valid, source: { documentIds: ids } }, { key: other.key });
    expect(theirs.body.code).toBe("document_not_found");
    const pipeline = await app.json("POST", "/api/v1/pipelines", {
      key,
      body: { name: "p", steps: [{ utility: "structure.pick-fields", config: { fields: ["n"] } }] },
    });
    const withPipeline = { source: { folder: "box" }, pipelineId: pipeline.body.pipeline.id, output: { mode: "report" } };
    expect((await submit(withPipeline)).status).toBe(202);
    const foreign = await submit(withPipeline, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("pipeline_not_found");
  });
});

describe("the queue", () => {
  test("list: newest first, a cursor, a state filter", async () => {
    const account = await app.newAccount();
    await importDocuments(app, account.key, 1, () => ({}), "box");
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await submit(valid, { key: account.key })).body.job.id);
    const first = await app.json("GET", "/api/v1/jobs?limit=2", { key: account.key });
    expect(first.body.jobs.map((job: { id: string }) => job.id)).toEqual([made[2], made[1]]);
    const second = await app.json("GET", `/api/v1/jobs?limit=2&cursor=${first.body.nextCursor}`, { key: account.key });
    expect(second.body.jobs.map((job: { id: string }) => job.id)).toEqual([made[0]]);
    expect(second.body.nextCursor).toBeNull();
    await app.json("POST", `/api/v1/jobs/${made[1]}/cancel`, { key: account.key });
    const all = await app.json("GET", "/api/v1/jobs", { key: account.key });
    expect(all.body.jobs.map((job: { state: string }) => job.state)).toEqual(["queued", "cancelled", "queued"]);
    const cancelled = await app.json("GET", "/api/v1/jobs?state=cancelled", { key: account.key });
    expect(cancelled.body.jobs.map((job: { id: string }) => job.id)).toEqual([made[1]]);
    expect((await app.json("GET", "/api/v1/jobs?state=done", { key: account.key })).status).toBe(400);
  });

  test("a queued job is cancelled at once, with its event; a finished one is 409", async () => {
    const created = await submit(valid);
    const cancelled = await app.json("POST", `/api/v1/jobs/${created.body.job.id}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.job.state).toBe("cancelled");
    expect(cancelled.body.job.finishedAt).toBeNumber();
    const again = await app.json("POST", `/api/v1/jobs/${created.body.job.id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("job_finished");
    const events = await app.json("GET", "/api/v1/events?type=job.cancelled", { key });
    expect(events.body.events.map((event: { data: { job: { id: string } } }) => event.data.job.id)).toContain(created.body.job.id);
  });

  test("past the plan's maxQueuedJobs: 429 too_many_jobs", async () => {
    const account = await app.newAccount({ maxQueuedJobs: 2 });
    await importDocuments(app, account.key, 1, () => ({}), "box");
    expect((await submit(valid, { key: account.key })).status).toBe(202);
    expect((await submit(valid, { key: account.key })).status).toBe(202);
    const refused = await submit(valid, { key: account.key });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("too_many_jobs");
  });

  test("Idempotency-Key: a retry gets the same job", async () => {
    const headers = { "Idempotency-Key": "job-once" };
    const first = await submit(valid, { headers });
    const retry = await submit(valid, { headers });
    expect(retry.status).toBe(202);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.job.id).toBe(first.body.job.id);
  });
});
