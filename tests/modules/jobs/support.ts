/** Jobs tests: an app with its job runner started, documents made in bulk, and waits on a job's state. */
import type { JobRunnerHandle, RunnerOptions } from "../../../src/modules/jobs/runner";
import { startJobRunner } from "../../../src/modules/jobs/runner";
import { createTestApp, type TestApp } from "../../support/app";

export interface JobsTestApp extends TestApp {
  runner: JobRunnerHandle;
  /** another runner over the same database and kinds (a second node) */
  startRunner(options?: Partial<RunnerOptions>): JobRunnerHandle;
}

/** A job runner over the app's database and kinds, as a node's would be (quiet, polling often). */
export const runnerOf = (app: TestApp, extra: Partial<RunnerOptions> = {}): JobRunnerHandle =>
  startJobRunner({
    database: app.testDb.database,
    kinds: app.app.jobs.kinds,
    config: app.config.jobs,
    logger: { log: () => {} } as never,
    pollMs: 100,
    ...extra,
  });

export async function createJobsApp(env: Record<string, string> = {}, options: { runner?: boolean } = {}): Promise<JobsTestApp> {
  const app = await createTestApp({ JOBS_LEASE_MS: "2000", ...env });
  const runners: JobRunnerHandle[] = [];
  const startRunner = (extra: Partial<RunnerOptions> = {}) => {
    const runner = runnerOf(app, extra);
    runners.push(runner);
    return runner;
  };
  const runner = options.runner === false ? ({ wake() {}, stop: async () => {} } as JobRunnerHandle) : startRunner();
  const close = app.close;
  return {
    ...app,
    runner,
    startRunner,
    async close() {
      await Promise.all(runners.map((r) => r.stop()));
      await close();
    },
  };
}

/** `count` documents in `folder` through the NDJSON import (one request), their ids in order. */
export async function importDocuments(
  app: TestApp,
  key: string,
  count: number,
  content: (index: number) => unknown,
  folder = "in",
): Promise<string[]> {
  const lines: string[] = [];
  for (let index = 0; index < count; index++)
    lines.push(JSON.stringify({ document: { name: `d${index}`, folder }, content: content(index) }));
  const response = await app.request("POST", "/api/v1/import", {
    key,
    rawBody: `${lines.join("\n")}\n`,
    headers: { "content-type": "application/x-ndjson" },
  });
  const results = (await response.text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { id?: string; error?: unknown });
  if (results.some((result) => !result.id)) throw new Error(`import failed: ${JSON.stringify(results.find((r) => !r.id))}`);
  return results.map((result) => result.id!);
}

/** Polls the job until `done` holds for it (default: it has finished). */
export async function waitForJob(
  app: TestApp,
  key: string,
  id: string,
  done: (job: any) => boolean = (job) => ["succeeded", "failed", "cancelled"].includes(job.state),
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await app.json("GET", `/api/v1/jobs/${id}`, { key });
    if (done(body.job)) return body.job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${JSON.stringify(body.job)}`);
    await Bun.sleep(20);
  }
}

export async function results(app: TestApp, key: string, id: string): Promise<any[]> {
  const response = await app.request("GET", `/api/v1/jobs/${id}/results`, { key });
  const text = await response.text();
  return text === ""
    ? []
    : text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
}
