import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp();
});
afterAll(async () => {
  await app.close();
});

const redact = { utility: "cleanup.redact", config: { patterns: ["email"] } };

describe("a utility over a folder", () => {
  test("newVersion: each document gets one new version, the job goes queued → running → succeeded", async () => {
    const { key } = await app.newAccount();
    const ids = await importDocuments(app, key, 5, (i) => ({ note: `write to u${i}@example.com` }), "orders");
    await importDocuments(app, key, 2, (i) => ({ note: `sub${i}@example.com` }), "orders/2026");
    await importDocuments(app, key, 1, () => ({ note: "other@example.com" }), "ordersX");
    const created = await app.json("POST", "/api/v1/jobs", {
      key,
      body: { source: { folder: "orders" }, ...redact, output: { mode: "newVersion" } },
    });
    expect(created.status).toBe(202);
    expect(created.headers.get("location")).toBe(`/api/v1/jobs/${created.body.job.id}`);
    expect(created.body.job).toMatchObject({ kind: "utility", state: "queued", progress: { total: 7, processed: 0 }, startedAt: null });
    const job = await waitForJob(app, key, created.body.job.id);
    expect(job).toMatchObject({ state: "succeeded", progress: { total: 7, processed: 7, succeeded: 7, failed: 0, skipped: 0 } });
    expect(job.startedAt).toBeGreaterThanOrEqual(job.createdAt);
    expect(job.finishedAt).toBeGreaterThanOrEqual(job.startedAt);
    const content = await app.json("GET", `/api/v1/documents/${ids[0]}/content`, { key });
    expect(content.body).toEqual({ note: "write to [REDACTED]" });
    const lines = await results(app, key, job.id);
    expect(lines).toHaveLength(7);
    expect(lines[0]).toEqual({ documentId: ids[0], status: "succeeded", version: 2 });
    const versions = await app.json("GET", `/api/v1/documents/${ids[0]}/versions`, { key });
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  test("saveAs: a new document per input in the other folder; the inputs stay as they were", async () => {
    const { key } = await app.newAccount();
    const ids = await importDocuments(app, key, 3, (i) => ({ csv: `a,b\n${i},x` }), "csv");
    const created = await app.json("POST", "/api/v1/jobs", {
      key,
      body: {
        source: { documentIds: ids },
        steps: [{ utility: "structure.pick-fields", config: { fields: ["csv"] } }],
        output: { mode: "saveAs", folder: "out" },
      },
    });
    expect(created.status).toBe(202);
    const job = await waitForJob(app, key, created.body.job.id);
    expect(job.state).toBe("succeeded");
    const lines = await results(app, key, job.id);
    expect(lines.map((line) => line.documentId)).toEqual(ids);
    for (const line of lines) {
      expect(line).toMatchObject({ status: "succeeded", version: 1 });
      const saved = await app.json("GET", `/api/v1/documents/${line.outputDocumentId}`, { key });
      expect(saved.body.document.folder).toBe("out");
    }
    const input = await app.json("GET", `/api/v1/documents/${ids[0]}`, { key });
    expect(input.body.document.version).toBe(1);
  });

  test("report: nothing written, each output in the results", async () => {
    const { key } = await app.newAccount();
    const [id] = await importDocuments(app, key, 1, () => ({ a: 1, b: 2 }), "r");
    const created = await app.json("POST", "/api/v1/jobs", {
      key,
      body: { source: { folder: "r" }, utility: "structure.pick-fields", config: { fields: ["a"] }, output: { mode: "report" } },
    });
    const job = await waitForJob(app, key, created.body.job.id);
    expect(job.state).toBe("succeeded");
    expect(await results(app, key, job.id)).toEqual([{ documentId: id, status: "succeeded", output: { a: 1 } }]);
    expect((await app.json("GET", `/api/v1/documents/${id}`, { key })).body.document.version).toBe(1);
  });
});

describe("failures", () => {
  test("a document larger than UTILITY_MAX_PAYLOAD_BYTES fails alone, as a single run on it would", async () => {
    const small = await createJobsApp({ UTILITY_MAX_PAYLOAD_BYTES: "2048" });
    try {
      const { key } = await small.newAccount();
      const ids = await importDocuments(small, key, 2, (i) => ({ text: "x".repeat(i === 0 ? 10 : 4000) }), "sizes");
      const created = await small.json("POST", "/api/v1/jobs", {
        key,
        body: { source: { folder: "sizes" }, ...redact, output: { mode: "report" } },
      });
      const job = await waitForJob(small, key, created.body.job.id);
      expect(job.progress).toMatchObject({ succeeded: 1, failed: 1 });
      expect((await results(small, key, job.id))[1]).toMatchObject({
        documentId: ids[1],
        status: "failed",
        error: { code: "payload_too_large" },
      });
    } finally {
      await small.close();
    }
  });

  test("onError continue: a failing document is recorded, the others go on; stop: the job fails at the first", async () => {
    const { key } = await app.newAccount();
    const ids = await importDocuments(app, key, 3, (i) => (i === 1 ? { not: "csv" } : "a,b\n1,2"), "f");
    const body = { source: { documentIds: ids }, utility: "convert.csv-to-json", output: { mode: "report" } };
    const going = await app.json("POST", "/api/v1/jobs", { key, body });
    const job = await waitForJob(app, key, going.body.job.id);
    expect(job).toMatchObject({ state: "succeeded", progress: { processed: 3, succeeded: 2, failed: 1 } });
    const lines = await results(app, key, job.id);
    expect(lines[1]).toMatchObject({ documentId: ids[1], status: "failed", error: { code: "utility_failed" } });

    const stopping = await app.json("POST", "/api/v1/jobs", {
      key,
      body: { ...body, source: { documentIds: [ids[1], ids[0]] }, onError: "stop" },
    });
    const stopped = await waitForJob(app, key, stopping.body.job.id);
    expect(stopped.state).toBe("failed");
    expect(stopped.error.code).toBe("utility_failed");
    expect(stopped.error.message).toContain(ids[1]);
  });
});
