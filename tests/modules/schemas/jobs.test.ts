/**
 * Schemas and jobs: the audit job lists each governed document, succeeded or failed with its errors; a
 * utility job's outputs into a governed folder are validated (reject fails that document, warn stores it
 * and records the event).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createJobsApp, type JobsTestApp, results, waitForJob } from "../jobs/support";

let t: JobsTestApp;
beforeAll(async () => {
  t = await createJobsApp();
});
afterAll(async () => {
  await t.close();
});

const ORDER = { type: "object", required: ["id"], properties: { id: { type: "integer" } } };

async function document(key: string, folder: string, content: unknown): Promise<string> {
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "d", folder, content } });
  expect(created.status).toBe(201);
  return created.body.document.id;
}

describe("audit", () => {
  test("a schemaAudit job: each governed document succeeded or failed with its errors; a nearer schema's subfolder is left out", async () => {
    const { key } = await t.newAccount();
    const good = await document(key, "orders", { id: 1 });
    const bad = await document(key, "orders/eu", { id: "x" });
    await document(key, "orders/archive", { id: "old" });
    await document(key, "elsewhere", { id: "x" });
    const schema = await t.json("POST", "/api/v1/schemas", {
      key,
      body: { name: "order", schema: ORDER, folders: ["orders"], mode: "warn" },
    });
    await t.json("POST", "/api/v1/schemas", { key, body: { name: "loose", schema: true, folders: ["orders/archive"] } });

    const started = await t.json("POST", `/api/v1/schemas/${schema.body.schema.id}/audit`, { key });
    expect(started.status).toBe(202);
    expect(started.body.job).toMatchObject({ kind: "schemaAudit", progress: { total: 2 } });
    expect(started.headers.get("location")).toBe(`/api/v1/jobs/${started.body.job.id}`);
    const job = await waitForJob(t, key, started.body.job.id);
    expect(job).toMatchObject({ state: "succeeded", progress: { total: 2, succeeded: 1, failed: 1 } });
    const lines = await results(t, key, job.id);
    expect(lines.find((line) => line.documentId === good)).toMatchObject({ status: "succeeded" });
    expect(lines.find((line) => line.documentId === bad)).toMatchObject({
      status: "failed",
      error: {
        code: "schema_violation",
        errors: [{ path: "/id", keyword: "type", schemaPath: "/properties/id/type", message: expect.any(String) }],
      },
    });
  });

  test("a schema that governs no document: 400 job_source_empty; another account's: 404", async () => {
    const { key } = await t.newAccount();
    const schema = await t.json("POST", "/api/v1/schemas", { key, body: { name: "s", schema: true, folders: ["empty"] } });
    const empty = await t.json("POST", `/api/v1/schemas/${schema.body.schema.id}/audit`, { key });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("job_source_empty");
    const stranger = await t.newAccount();
    expect((await t.json("POST", `/api/v1/schemas/${schema.body.schema.id}/audit`, { key: stranger.key })).status).toBe(404);
  });
});

describe("job outputs", () => {
  const job = (key: string, output: unknown) =>
    t.json("POST", "/api/v1/jobs", {
      key,
      body: { source: { folder: "in" }, utility: "structure.pick-fields", config: { fields: ["id"] }, output },
    });

  test("mode reject: an output into a governed folder that breaks its schema fails that document; the valid one is written", async () => {
    const { key } = await t.newAccount();
    await document(key, "in", { id: 1, x: 1 });
    await document(key, "in", { id: "one", x: 1 });
    await t.json("POST", "/api/v1/schemas", { key, body: { name: "order", schema: ORDER, folders: ["out"] } });
    const started = await job(key, { mode: "saveAs", folder: "out" });
    expect(started.status).toBe(202);
    const done = await waitForJob(t, key, started.body.job.id);
    expect(done.progress).toMatchObject({ succeeded: 1, failed: 1 });
    const failed = (await results(t, key, done.id)).find((line) => line.status === "failed");
    expect(failed.error).toMatchObject({ code: "schema_violation", errors: [expect.objectContaining({ path: "/id", keyword: "type" })] });
    expect((await t.json("GET", "/api/v1/documents?folder=out", { key })).body.documents).toHaveLength(1);
  });

  test("mode warn: newVersion outputs are stored and a schema.violated event records each", async () => {
    const { key } = await t.newAccount();
    const id = await document(key, "in", { id: 1, x: 1 });
    await t.json("POST", "/api/v1/schemas", { key, body: { name: "strict", schema: { required: ["x"] }, folders: ["in"], mode: "warn" } });
    const started = await job(key, { mode: "newVersion" });
    const done = await waitForJob(t, key, started.body.job.id);
    expect(done.progress).toMatchObject({ succeeded: 1 });
    expect((await t.json("GET", `/api/v1/documents/${id}/content`, { key })).body).toEqual({ id: 1 });
    const events = await t.json("GET", "/api/v1/events?type=schema.violated", { key });
    expect(events.body.events).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ document: expect.objectContaining({ id, version: 2 }), warningCount: 1 }),
      }),
    ]);
  });
});
