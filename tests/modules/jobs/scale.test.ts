/** A job over 10,000 documents: every one processed once, the results streamed, progress exact. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp();
});
afterAll(async () => {
  await app.close();
});

test("10,000 documents with newVersion", async () => {
  const { key } = await app.newAccount();
  const ids = await importDocuments(app, key, 10_000, (i) => ({ i, e: `u${i}@example.com` }), "big");
  const created = await app.json("POST", "/api/v1/jobs", {
    key,
    body: { source: { folder: "big" }, utility: "cleanup.redact", config: { patterns: ["email"] }, output: { mode: "newVersion" } },
  });
  expect(created.status).toBe(202);
  const job = await waitForJob(app, key, created.body.job.id, undefined, 120_000);
  expect(job).toMatchObject({ state: "succeeded", progress: { total: 10_000, processed: 10_000, succeeded: 10_000 } });
  const lines = await results(app, key, job.id);
  expect(lines).toHaveLength(10_000);
  expect(lines.map((line) => line.documentId)).toEqual(ids);
  expect(lines.every((line) => line.status === "succeeded" && line.version === 2)).toBe(true);
  const last = await app.json("GET", `/api/v1/documents/${ids.at(-1)}/content`, { key });
  expect(last.body).toEqual({ i: 9_999, e: "[REDACTED]" });
}, 180_000);
