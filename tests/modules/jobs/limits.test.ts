/** The account's running-jobs limit, and the retention sweep. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sweepJobs } from "../../../src/modules/jobs/retention";
import { createJobsApp, importDocuments, type JobsTestApp, waitForJob } from "./support";

let app: JobsTestApp;
beforeAll(async () => {
  app = await createJobsApp({}, { runner: false });
});
afterAll(async () => {
  await app.close();
});

const report = { source: { folder: "l" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "report" } };

test("past the plan's maxRunningJobs a job waits queued until one of the account's jobs finishes", async () => {
  const { key } = await app.newAccount({ maxRunningJobs: 1 });
  await importDocuments(app, key, 1, () => ({ n: 1 }), "l");
  const utility = app.app.jobs.kinds.get("utility")!;
  const { JobKinds } = await import("../../../src/modules/jobs/kinds");
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const runner = app.startRunner({
    kinds: new JobKinds().register({
      ...utility,
      async prepare(item) {
        await gate;
        return utility.prepare(item);
      },
    }),
  });
  const first = (await app.json("POST", "/api/v1/jobs", { key, body: report })).body.job.id;
  const second = (await app.json("POST", "/api/v1/jobs", { key, body: report })).body.job.id;
  await waitForJob(app, key, first, (job) => job.state === "running");
  await Bun.sleep(500);
  expect((await app.json("GET", `/api/v1/jobs/${second}`, { key })).body.job.state).toBe("queued");
  release();
  expect((await waitForJob(app, key, first)).state).toBe("succeeded");
  expect((await waitForJob(app, key, second)).state).toBe("succeeded");
  await runner.stop();
});

test("finished jobs and their results are swept after the retention; unfinished ones stay", async () => {
  const { key } = await app.newAccount();
  await importDocuments(app, key, 1, () => ({ n: 1 }), "l");
  // no runner picks these up here: one is cancelled (finished), the other stays queued
  const done = (await app.json("POST", "/api/v1/jobs", { key, body: report })).body.job.id;
  expect((await app.json("POST", `/api/v1/jobs/${done}/cancel`, { key })).body.job.state).toBe("cancelled");
  const waiting = (await app.json("POST", "/api/v1/jobs", { key, body: report })).body.job;
  expect(await sweepJobs(app.testDb.database, Date.now() - 60_000)).toBe(0);
  expect((await app.json("GET", `/api/v1/jobs/${done}`, { key })).status).toBe(200);
  await sweepJobs(app.testDb.database, Date.now() + 1);
  expect((await app.json("GET", `/api/v1/jobs/${done}`, { key })).status).toBe(404);
  expect((await app.request("GET", `/api/v1/jobs/${done}/results`, { key })).status).toBe(404);
  expect((await app.json("GET", `/api/v1/jobs/${waiting.id}`, { key })).status).toBe(200);
});
