/**
 * A passing fault while a document is prepared (the database or the content store not answering) does
 * not fail the document: it is prepared again after a short wait, three times, and only a fault that
 * outlasts them fails it, with its 503 code. Any other error fails it at once, as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type JobKind, JobKinds } from "../../../src/modules/jobs/kinds";
import { ContentStoreUnavailable } from "../../../src/storage/content-store";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
/** per document id: the errors its next prepares throw, in order, before the real prepare runs */
const planned = new Map<string, Error[]>();
const prepares = new Map<string, number>();

beforeAll(async () => {
  app = await createJobsApp({}, { runner: false });
  const faulty = new JobKinds();
  for (const name of app.app.jobs.kinds.names()) {
    const kind = app.app.jobs.kinds.get(name)!;
    faulty.register(
      Object.assign(Object.create(kind) as JobKind, {
        prepare: (item: Parameters<JobKind["prepare"]>[0]) => {
          prepares.set(item.documentId, (prepares.get(item.documentId) ?? 0) + 1);
          const fault = planned.get(item.documentId)?.shift();
          return fault ? Promise.reject(fault) : kind.prepare(item);
        },
      }),
    );
  }
  app.startRunner({ kinds: faulty });
});
afterAll(async () => {
  await app.close();
});

/** What postgres.js throws when the connection drops under a query. */
const connectionLost = () => Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" });
const redact = { utility: "cleanup.redact", config: { patterns: ["email"] }, output: { mode: "newVersion" } };

async function runJob(folder: string, faults: (index: number) => Error[]) {
  const { key } = await app.newAccount();
  const ids = await importDocuments(app, key, 3, (i) => ({ email: `u${i}@example.com` }), folder);
  for (const [index, id] of ids.entries()) planned.set(id, faults(index));
  const created = await app.json("POST", "/api/v1/jobs", { key, body: { source: { folder }, ...redact } });
  expect(created.status).toBe(202);
  const job = await waitForJob(app, key, created.body.job.id);
  const lines = await results(app, key, created.body.job.id);
  return { key, ids, job, byId: new Map(lines.map((line) => [line.documentId, line])) };
}

test("faults that pass: every document prepared again and written", async () => {
  const { key, ids, job } = await runJob("passing", (index) =>
    index === 0 ? [connectionLost(), connectionLost(), connectionLost()] : [new ContentStoreUnavailable("bucket down")],
  );
  expect(job).toMatchObject({ state: "succeeded", progress: { total: 3, succeeded: 3, failed: 0 } });
  expect(ids.map((id) => prepares.get(id))).toEqual([4, 2, 2]);
  for (const id of ids) expect((await app.json("GET", `/api/v1/documents/${id}/content`, { key })).body.email).toBe("[REDACTED]");
});

test("a fault that outlasts the retries fails its document with the fault's 503 code; the others are written", async () => {
  const { ids, job, byId } = await runJob("lasting", (index) => (index === 1 ? Array.from({ length: 10 }, connectionLost) : []));
  expect(job.progress).toMatchObject({ total: 3, succeeded: 2, failed: 1 });
  expect(prepares.get(ids[1])).toBe(4);
  expect(byId.get(ids[1])).toMatchObject({ status: "failed", error: { code: "database_unavailable" } });
});

test("any other error fails the document at once", async () => {
  const { ids, job, byId } = await runJob("broken", (index) => (index === 2 ? [new Error("a bug")] : []));
  expect(job.progress).toMatchObject({ total: 3, succeeded: 2, failed: 1 });
  expect(prepares.get(ids[2])).toBe(1);
  expect(byId.get(ids[2])).toMatchObject({ status: "failed", error: { code: "internal_error" } });
});
