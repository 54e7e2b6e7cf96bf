/** The engine: cancel, credits, a document changed meanwhile, a lease lost to another node, events. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { JobKinds } from "../../../src/modules/jobs/kinds";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp({ JOBS_CHUNK_SIZE: "10" });
});
afterAll(async () => {
  await app.close();
});

const redact = { utility: "cleanup.redact", config: { patterns: ["email"] }, output: { mode: "newVersion" } };

describe("the engine", () => {
  test("cancel while running: cancelling, then cancelled within a second; what was written stays", async () => {
    const { key } = await app.newAccount();
    await importDocuments(app, key, 400, (i) => ({ e: `u${i}@example.com` }), "many");
    const created = await app.json("POST", "/api/v1/jobs", { key, body: { source: { folder: "many" }, ...redact } });
    const id = created.body.job.id;
    await waitForJob(app, key, id, (job) => job.progress.processed > 0);
    const cancelling = await app.json("POST", `/api/v1/jobs/${id}/cancel`, { key });
    expect(cancelling.status).toBe(200);
    expect(["cancelling", "cancelled"]).toContain(cancelling.body.job.state);
    const asked = Date.now();
    const job = await waitForJob(app, key, id, (job) => job.state === "cancelled", 5_000);
    expect(Date.now() - asked).toBeLessThan(1_000);
    expect(job.progress.processed).toBeLessThan(400);
    const lines = await results(app, key, id);
    expect(lines).toHaveLength(job.progress.processed);
    const written = lines.filter((line) => line.status === "succeeded").length;
    const events = await app.json("GET", "/api/v1/events?type=job.cancelled", { key });
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0].data.job).toMatchObject({ id, state: "cancelled", progress: { succeeded: written } });
    await Bun.sleep(300);
    expect((await app.json("GET", `/api/v1/jobs/${id}`, { key })).body.job.progress.processed).toBe(job.progress.processed);
  });

  test("credits run out: the job fails with credits_exhausted after the documents it could pay for", async () => {
    const { key } = await app.newAccount({ monthlyCredits: 3 });
    await importDocuments(app, key, 5, (i) => ({ e: `u${i}@example.com` }), "five");
    const created = await app.json("POST", "/api/v1/jobs", { key, body: { source: { folder: "five" }, ...redact } });
    const job = await waitForJob(app, key, created.body.job.id);
    expect(job).toMatchObject({ state: "failed", error: { code: "credits_exhausted" }, progress: { total: 5, succeeded: 3 } });
    expect((await app.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(3);
    const events = await app.json("GET", "/api/v1/events?type=job.failed", { key });
    expect(events.body.events[0].data.job.error.code).toBe("credits_exhausted");
  });

  test("a job.succeeded event once it is done", async () => {
    const { key } = await app.newAccount();
    await importDocuments(app, key, 2, () => ({ e: "a@example.com" }), "ev");
    const created = await app.json("POST", "/api/v1/jobs", { key, body: { source: { folder: "ev" }, ...redact } });
    await waitForJob(app, key, created.body.job.id);
    const events = await app.json("GET", "/api/v1/events?type=job.succeeded", { key });
    expect(events.body.events.map((event: { data: { job: { id: string } } }) => event.data.job.id)).toEqual([created.body.job.id]);
  });
});

describe("fair share", () => {
  test("another account's small job finishes while one account's large job still runs", async () => {
    const a = await app.newAccount();
    const b = await app.newAccount();
    await importDocuments(app, a.key, 600, (i) => ({ e: `a${i}@example.com` }), "huge");
    await importDocuments(app, b.key, 5, (i) => ({ e: `b${i}@example.com` }), "small");
    const large = (await app.json("POST", "/api/v1/jobs", { key: a.key, body: { source: { folder: "huge" }, ...redact } })).body.job.id;
    await waitForJob(app, a.key, large, (job) => job.progress.processed > 0);
    const small = (await app.json("POST", "/api/v1/jobs", { key: b.key, body: { source: { folder: "small" }, ...redact } })).body.job.id;
    const done = await waitForJob(app, b.key, small);
    expect(done.state).toBe("succeeded");
    const stillRunning = (await app.json("GET", `/api/v1/jobs/${large}`, { key: a.key })).body.job;
    expect(stillRunning.state).toBe("running");
    expect(stillRunning.progress.processed).toBeLessThan(600);
    await app.json("POST", `/api/v1/jobs/${large}/cancel`, { key: a.key });
    await waitForJob(app, a.key, large);
  });
});

describe("exactly once", () => {
  test("a document changed after the job read it is skipped, and keeps the change", async () => {
    const quiet = await createJobsApp({}, { runner: false });
    try {
      const { key } = await quiet.newAccount();
      const [id] = await importDocuments(quiet, key, 1, () => ({ e: "a@example.com" }), "c");
      const utility = quiet.app.jobs.kinds.get("utility")!;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let read!: () => void;
      const wasRead = new Promise<void>((resolve) => {
        read = resolve;
      });
      const kinds = new JobKinds().register({
        ...utility,
        async prepare(item) {
          const prepared = await utility.prepare(item);
          read();
          await gate;
          return prepared;
        },
      });
      quiet.startRunner({ kinds });
      const created = await quiet.json("POST", "/api/v1/jobs", { key, body: { source: { documentIds: [id] }, ...redact } });
      await wasRead;
      expect((await quiet.request("PUT", `/api/v1/documents/${id}/content`, { key, body: { e: "changed" } })).status).toBe(200);
      release();
      const job = await waitForJob(quiet, key, created.body.job.id);
      expect(job.progress).toMatchObject({ processed: 1, skipped: 1, succeeded: 0 });
      expect(await results(quiet, key, job.id)).toEqual([
        { documentId: id, status: "skipped", error: { code: "document_changed", message: expect.stringContaining(id!) } },
      ]);
      expect((await quiet.json("GET", `/api/v1/documents/${id}/content`, { key })).body).toEqual({ e: "changed" });
    } finally {
      await quiet.close();
    }
  });

  test("a lease lost to another node: each document gets exactly one new version", async () => {
    const quiet = await createJobsApp({ JOBS_CHUNK_SIZE: "5" }, { runner: false });
    try {
      const { key } = await quiet.newAccount();
      const ids = await importDocuments(quiet, key, 12, (i) => ({ e: `u${i}@example.com` }), "lease");
      const utility = quiet.app.jobs.kinds.get("utility")!;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let prepared = 0;
      const stalled = new JobKinds().register({
        ...utility,
        async prepare(item) {
          const value = await utility.prepare(item);
          prepared++;
          await gate;
          return value;
        },
      });
      // node A: its clock runs a minute late, so every lease it takes (and renews) has already run out
      const late = quiet.startRunner({ kinds: stalled, now: () => Date.now() - 60_000 });
      const created = await quiet.json("POST", "/api/v1/jobs", { key, body: { source: { folder: "lease" }, ...redact } });
      while (prepared === 0) await Bun.sleep(10);
      // node B takes the chunks over and finishes the job while A still holds its prepared work
      quiet.startRunner();
      const job = await waitForJob(quiet, key, created.body.job.id);
      release();
      await late.stop();
      expect(job.progress).toMatchObject({ total: 12, processed: 12, succeeded: 12, failed: 0, skipped: 0 });
      for (const id of ids) {
        const versions = await quiet.json("GET", `/api/v1/documents/${id}/versions`, { key });
        expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
      }
      const lines = await results(quiet, key, job.id);
      expect(lines.map((line) => line.documentId)).toEqual(ids);
      expect((await quiet.json("GET", `/api/v1/jobs/${job.id}`, { key })).body.job.progress.processed).toBe(12);
    } finally {
      await quiet.close();
    }
  });
});
