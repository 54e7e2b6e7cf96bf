/** An internal kind, made by code with createJob: it plugs into the engine without touching it. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Executor, run, statement } from "../../../src/db/statement";
import { JobKinds } from "../../../src/modules/jobs/kinds";
import { createJob } from "../../../src/modules/jobs/service";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp({}, { runner: false });
});
afterAll(async () => {
  await app.close();
});

test("a schema-audit-like kind: per document prepare and commit, onFinished in the finishing transaction, listed with its kind", async () => {
  const { key, accountId } = await app.newAccount();
  const ids = await importDocuments(app, key, 3, (i) => (i === 1 ? { bad: true } : { ok: i }), "audit");
  const finished: { id: string; state: string; inTransaction: boolean }[] = [];
  const kinds = new JobKinds().register<{ valid: boolean }>({
    kind: "testAudit",
    creditsPerItem: () => 0,
    async prepare(item) {
      const response = await app.request("GET", `/api/v1/documents/${item.documentId}/content`, { key });
      return { valid: !("bad" in ((await response.json()) as object)) };
    },
    async commit(_tx, _item, prepared) {
      return prepared.valid
        ? { status: "succeeded" }
        : { status: "failed", error: { code: "validation_failed", message: "does not match", errors: [{ path: "/bad" }] } };
    },
    async onFinished(tx: Executor, job) {
      // the finishing transaction has written the job's state already, so it holds a transaction id
      const [row] = await run(tx, statement<[], { assigned: boolean }>("select txid_current_if_assigned() is not null as assigned"), []);
      const inTransaction = row?.assigned === true;
      finished.push({ id: job.id, state: job.state, inTransaction });
    },
  });
  const runner = app.startRunner({ kinds });
  const job = await createJob(
    { database: app.testDb.database, now: Date.now },
    { accountId, kind: "testAudit", documentIds: ids, params: {} },
  );
  runner.wake();
  const done = await waitForJob(app, key, job.id);
  expect(done).toMatchObject({ kind: "testAudit", state: "succeeded", progress: { total: 3, succeeded: 2, failed: 1 } });
  expect(finished).toEqual([{ id: job.id, state: "succeeded", inTransaction: true }]);
  expect((await results(app, key, job.id))[1]).toEqual({
    documentId: ids[1],
    status: "failed",
    error: { code: "validation_failed", message: "does not match", errors: [{ path: "/bad" }] },
  });
  const listed = await app.json("GET", "/api/v1/jobs", { key });
  expect(listed.body.jobs.map((row: { kind: string }) => row.kind)).toEqual(["testAudit"]);
  // no credit for an internal kind
  expect((await app.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(0);
});
