/**
 * A chunk's commits lock their documents first, in id order (JobKind.lockChunk), so a utility job's new
 * versions racing content replaces of the same documents, with an index on the folder (each write then
 * takes its document and the account row), end without a deadlock: every replace answers 200 and every
 * document is either the job's version or left with document_changed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createJobsApp, importDocuments, type JobsTestApp, results, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp();
});
afterAll(async () => {
  await app.close();
});

test("a newVersion job racing content replaces of its documents: no 503, each document done or document_changed (three times)", async () => {
  for (let round = 0; round < 3; round++) {
    const { key } = await app.newAccount();
    await app.json("POST", "/api/v1/indexes", { key, body: { folder: "in", fields: [{ path: "/n" }] } });
    const ids = await importDocuments(app, key, 60, (i) => ({ n: i, drop: true }));
    const created = await app.json("POST", "/api/v1/jobs", {
      key,
      body: { source: { folder: "in" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "newVersion" } },
    });
    expect(created.status).toBe(202);
    const statuses: number[] = [];
    const lane = async (from: number) => {
      for (let i = from; i < ids.length; i += 4)
        statuses.push((await app.request("PUT", `/api/v1/documents/${ids[i]}/content`, { key, body: { n: 1_000 + i } })).status);
    };
    await Promise.all([0, 1, 2, 3].map(lane));
    expect(new Set(statuses)).toEqual(new Set([200]));
    const job = await waitForJob(app, key, created.body.job.id);
    expect(job.state).toBe("succeeded");
    const lines = await results(app, key, job.id);
    expect(lines).toHaveLength(60);
    for (const line of lines) expect(line.status === "succeeded" || line.error?.code === "document_changed").toBe(true);
  }
}, 60_000);
