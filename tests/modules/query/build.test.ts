/**
 * An index build is a job of kind indexBuild: listed with the account's jobs, the index's progress its
 * job's, cancelled when the index is dropped; racing content replaces of the same documents, it ends
 * with the entries a rebuild writes. A utility job's output whose index set changed under it is
 * prepared again rather than failed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "../jobs/support";
import { entriesOf, rebuiltEntries } from "./support";

setDefaultTimeout(30_000); // builds run through the job runner on a shared machine
let app: JobsTestApp;
let idle: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp();
  idle = await createJobsApp({}, { runner: false });
});
afterAll(async () => {
  await Promise.all([app.close(), idle.close()]);
});

const waitForIndex = async (t: JobsTestApp, key: string, id: string) => {
  for (let i = 0; i < 1_500; i++) {
    const { body } = await t.json("GET", `/api/v1/indexes/${id}`, { key });
    if (body.index.state !== "building") return body.index;
    await Bun.sleep(20);
  }
  throw new Error(`index ${id} still building`);
};

test("an index build is a job of kind indexBuild: listed, its progress the index's, the index ready with index.ready", async () => {
  const { key } = await idle.newAccount();
  await importDocuments(idle, key, 5, (i) => ({ n: i }), "b");
  // past UTILITY_INLINE_MAX_BYTES: their entries are computed in the worker pool
  await importDocuments(idle, key, 2, (i) => ({ n: 10 + i, pad: "x".repeat(4_000) }), "b/sub");
  const trashed = await importDocuments(idle, key, 1, () => ({ n: 99 }), "b");
  expect((await idle.request("DELETE", `/api/v1/documents/${trashed[0]}`, { key })).status).toBe(200);
  const made = await idle.json("POST", "/api/v1/indexes", { key, body: { folder: "b", fields: [{ path: "/n" }] } });
  expect(made.status).toBe(202);
  expect(made.body.index).toMatchObject({ state: "building", progress: { processed: 0, total: 7 } });
  const listed = await idle.json("GET", "/api/v1/jobs", { key });
  const job = listed.body.jobs.find((one: { kind: string }) => one.kind === "indexBuild");
  expect(job).toMatchObject({ kind: "indexBuild", state: "queued" });
  expect(job.progress).toMatchObject({ processed: 0, total: 7 });

  const runner = idle.startRunner();
  try {
    const done = await waitForJob(idle, key, job.id);
    expect(done.state).toBe("succeeded");
    const index = await waitForIndex(idle, key, made.body.index.id);
    expect(index).toMatchObject({ state: "ready", progress: { processed: 7, total: 7 } });
    const entries = await entriesOf(idle, made.body.index.id);
    expect(entries).toHaveLength(7);
    expect(await rebuiltEntries(idle, made.body.index.id)).toEqual(entries);
    const events = await idle.json("GET", "/api/v1/events?limit=100", { key });
    const types = events.body.events.map((event: { type: string }) => event.type);
    expect(types).toContain("index.ready");
    expect(types).toContain("job.succeeded");
  } finally {
    await runner.stop();
  }
});

test("dropping an index cancels its build job", async () => {
  const { key } = await idle.newAccount();
  await importDocuments(idle, key, 3, (i) => ({ n: i }), "d");
  const made = await idle.json("POST", "/api/v1/indexes", { key, body: { folder: "d", fields: [{ path: "/n" }] } });
  const job = (await idle.json("GET", "/api/v1/jobs", { key })).body.jobs[0];
  expect(job.kind).toBe("indexBuild");
  expect((await idle.json("DELETE", `/api/v1/indexes/${made.body.index.id}`, { key })).status).toBe(200);
  const cancelled = (await idle.json("GET", `/api/v1/jobs/${job.id}`, { key })).body.job;
  expect(cancelled.state).toBe("cancelled");
  expect(await entriesOf(idle, made.body.index.id)).toEqual([]);
});

test("a unique index's build meeting a duplicate key fails the index with its reason (index.failed)", async () => {
  const { key } = await app.newAccount();
  await importDocuments(app, key, 3, () => ({ n: 1 }), "u");
  const made = await app.json("POST", "/api/v1/indexes", { key, body: { folder: "u", fields: [{ path: "/n" }], unique: true } });
  const index = await waitForIndex(app, key, made.body.index.id);
  expect(index.state).toBe("failed");
  expect(index.reason).toContain("same key");
  expect(await entriesOf(app, made.body.index.id)).toEqual([]);
});

test("a build racing content replaces of its own documents ends with the entries of a rebuild, no 503 (five times)", async () => {
  for (let round = 0; round < 5; round++) {
    const { key } = await app.newAccount();
    const ids = await importDocuments(app, key, 60, (i) => ({ n: i }), "race");
    const made = await app.json("POST", "/api/v1/indexes", { key, body: { folder: "race", fields: [{ path: "/n" }] } });
    expect(made.status).toBe(202);
    const statuses: number[] = [];
    const lane = async (from: number) => {
      for (let i = from; i < ids.length; i += 4) {
        const response = await app.request("PUT", `/api/v1/documents/${ids[i]}/content`, { key, body: { n: 1_000 + i } });
        statuses.push(response.status);
      }
    };
    await Promise.all([0, 1, 2, 3].map(lane));
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect((await waitForIndex(app, key, made.body.index.id)).state).toBe("ready");
    const entries = await entriesOf(app, made.body.index.id);
    expect(entries).toHaveLength(60);
    expect(await rebuiltEntries(app, made.body.index.id)).toEqual(entries);
  }
}, 60_000);

test("a utility job's output whose account declared an index meanwhile is indexed again, not failed", async () => {
  const { key } = await app.newAccount();
  // the writes leave this node's copy of the account's indexes (none) for a few seconds
  const ids = await importDocuments(app, key, 4, (i) => ({ n: i, drop: true }), "in");
  const index = await app.json("POST", "/api/v1/indexes", { key, body: { folder: "elsewhere", fields: [{ path: "/n" }] } });
  expect(index.body.index.state).toBe("ready");
  const created = await app.json("POST", "/api/v1/jobs", {
    key,
    body: { source: { folder: "in" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "newVersion" } },
  });
  const job = await waitForJob(app, key, created.body.job.id);
  expect(job.state).toBe("succeeded");
  const lines = await results(app, key, job.id);
  expect(lines.map((line) => [line.documentId, line.status])).toEqual(ids.map((id) => [id, "succeeded"]));
  for (const id of ids) expect((await app.json("GET", `/api/v1/documents/${id}/content`, { key })).body).not.toHaveProperty("drop");
});
