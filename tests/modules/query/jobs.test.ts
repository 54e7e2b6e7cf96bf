/** The query as a job's source, and jobs' saved outputs keeping the index entries (each equal to a rebuild). */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "../jobs/support";
import { entriesOf, rebuiltEntries } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp();
});
afterAll(async () => {
  await app.close();
});

test("a job over { query }: the documents the query matches, in its index's order; its outputs are indexed as they commit", async () => {
  const { key } = await app.newAccount();
  const index = await app.json("POST", "/api/v1/indexes", { key, body: { folder: "in", fields: [{ path: "/k" }, { path: "/n" }] } });
  const out = await app.json("POST", "/api/v1/indexes", { key, body: { folder: "out", fields: [{ path: "/n" }] } });
  const ids = await importDocuments(app, key, 6, (i) => ({ k: i % 2 === 0 ? "even" : "odd", n: i, drop: true }));
  const created = await app.json("POST", "/api/v1/jobs", {
    key,
    body: {
      source: { query: { folder: "in", filter: { "/k": "even" } } },
      utility: "structure.pick-fields",
      config: { fields: ["k", "n"] },
      output: { mode: "saveAs", folder: "out" },
    },
  });
  expect(created.status).toBe(202);
  const job = await waitForJob(app, key, created.body.job.id);
  expect(job.state).toBe("succeeded");
  expect((await results(app, key, job.id)).map((line) => line.documentId)).toEqual([ids[0], ids[2], ids[4]]);
  expect(await entriesOf(app, out.body.index.id)).toHaveLength(3);
  expect(await rebuiltEntries(app, out.body.index.id)).toEqual(await entriesOf(app, out.body.index.id));

  const replaced = await app.json("POST", "/api/v1/jobs", {
    key,
    body: { source: { folder: "in" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "newVersion" } },
  });
  expect((await waitForJob(app, key, replaced.body.job.id)).state).toBe("succeeded");
  const entries = await entriesOf(app, index.body.index.id);
  expect(await rebuiltEntries(app, index.body.index.id)).toEqual(entries);
  const missingK = await app.json("POST", "/api/v1/documents/query", { key, body: { folder: "in", filter: { "/k": { $exists: false } } } });
  expect(missingK.body.documents).toHaveLength(6);

  const refused = await app.json("POST", "/api/v1/jobs", {
    key,
    body: {
      source: { query: { folder: "in", filter: { "/zzz": 1 } } },
      utility: "structure.pick-fields",
      config: { fields: ["n"] },
      output: { mode: "report" },
    },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe("query_needs_index");
});
