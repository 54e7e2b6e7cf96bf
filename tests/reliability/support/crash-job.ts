/**
 * A job through kills of the node that runs it (issue 35): the real server, a job that gives each of
 * DOCUMENTS documents a new version; the server is SIGKILLed while the job runs, `kills` times, and
 * restarted on the same database and content. Once the job has finished, checks that:
 *  - the job succeeded, its progress counts every document once (processed = succeeded = total);
 *  - every document has exactly one new version (version 2, with the output's bytes), however many
 *    kills interrupted a chunk: the killed node's claims were taken over after their lease, and nothing
 *    it had prepared was written twice;
 *  - the results list every document exactly once, in order, each with version 2;
 *  - a query index declared just before the job, its build (another job) running through the same
 *    kills and the job's new versions, ends ready with the entries a rebuild would write: a query on
 *    the redacted value finds every document once, in order, and none keeps an entry of its old bytes.
 */
import { createTestDatabase, type TestDatabase } from "../../support/database";
import { type RunningServer, removeDataDir, startServer, tempDataDir } from "../../support/server";

export interface JobCrashResult {
  kills: number;
  documents: number;
  /** documents the job had processed, as last read, when each kill came */
  processedAtKills: number[];
  violations: string[];
  elapsedMs: number;
}

const DOCUMENTS = 600;

export async function runJobCrashTrial(options: { kills: number; mode: "embedded" | "external" }): Promise<JobCrashResult> {
  const started = performance.now();
  const violations: string[] = [];
  const dataDir = tempDataDir();
  const bootstrapKey = `kiln_JobCrash${Bun.randomUUIDv7().replaceAll("-", "")}`;
  let database: TestDatabase | undefined;
  let server: RunningServer | undefined;
  const processedAtKills: number[] = [];
  try {
    if (options.mode === "external") {
      database = await createTestDatabase();
      await database.database.close();
    }
    // small chunks and a short lease: a killed node's chunk is taken over within a second of the restart
    const env = {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: bootstrapKey,
      JOBS_CHUNK_SIZE: "20",
      JOBS_LEASE_MS: "1000",
      ...(database ? { DATABASE_URL: database.url } : {}),
    };
    server = await startServer(env);
    const call = async (method: string, path: string, key: string, body?: string, type = "application/json") => {
      const response = await fetch(server!.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": type },
        body,
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response;
    };
    const { account } = (await (
      await call("POST", "/api/v1/admin/accounts", bootstrapKey, JSON.stringify({ name: "jobs" }))
    ).json()) as any;
    const { key } = (await (
      await call(
        "POST",
        "/api/v1/admin/keys",
        bootstrapKey,
        JSON.stringify({ accountId: account.id, permissions: ["documents", "utilities"] }),
      )
    ).json()) as any;
    const lines = Array.from({ length: DOCUMENTS }, (_, i) =>
      JSON.stringify({ document: { name: `d${i}`, folder: "crash" }, content: { i, e: `u${i}@example.com` } }),
    );
    const imported = await (await call("POST", "/api/v1/import", key, `${lines.join("\n")}\n`, "application/x-ndjson")).text();
    const ids = imported
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { id: string }).id);
    const index = (
      (await (
        await call("POST", "/api/v1/indexes", key, JSON.stringify({ folder: "crash", fields: [{ path: "/e" }, { path: "/i" }] }))
      ).json()) as any
    ).index;
    const submitted = (await (
      await call(
        "POST",
        "/api/v1/jobs",
        key,
        JSON.stringify({
          source: { folder: "crash" },
          utility: "cleanup.redact",
          config: { patterns: ["email"] },
          output: { mode: "newVersion" },
        }),
      )
    ).json()) as any;
    const jobId: string = submitted.job.id;
    const job = async () => ((await (await call("GET", `/api/v1/jobs/${jobId}`, key)).json()) as any).job;

    for (let kill = 1; kill <= options.kills; kill++) {
      // kill at a moment the job is under way: past the previous kill's progress, not yet done
      const target = Math.floor((DOCUMENTS * kill) / (options.kills + 1));
      let current = await job();
      while (current.progress.processed < target && current.state !== "succeeded") {
        await Bun.sleep(5);
        current = await job();
      }
      server.proc.kill("SIGKILL");
      await server.proc.exited;
      processedAtKills.push(current.progress.processed);
      server = await startServer(env);
    }
    const deadline = Date.now() + 120_000;
    let last = await job();
    while (!["succeeded", "failed", "cancelled"].includes(last.state) && Date.now() < deadline) {
      await Bun.sleep(50);
      last = await job();
    }
    if (last.state !== "succeeded") violations.push(`the job ended ${last.state}: ${JSON.stringify(last)}`);
    const { total, processed, succeeded, failed, skipped } = last.progress;
    if (total !== DOCUMENTS || processed !== DOCUMENTS || succeeded !== DOCUMENTS || failed + skipped !== 0)
      violations.push(`progress is not every document once: ${JSON.stringify(last.progress)}`);
    const results = (await (await call("GET", `/api/v1/jobs/${jobId}/results`, key)).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { documentId: string; status: string; version?: number });
    if (results.map((line) => line.documentId).join() !== ids.join())
      violations.push(`the results do not list every document once, in order (${results.length} lines)`);
    for (const line of results) if (line.status !== "succeeded" || line.version !== 2) violations.push(`result ${JSON.stringify(line)}`);
    let built = ((await (await call("GET", `/api/v1/indexes/${index.id}`, key)).json()) as any).index;
    while (built.state === "building" && Date.now() < deadline) {
      await Bun.sleep(50);
      built = ((await (await call("GET", `/api/v1/indexes/${index.id}`, key)).json()) as any).index;
    }
    if (built.state !== "ready") violations.push(`the index ended ${built.state}: ${JSON.stringify(built)}`);
    const queried = async (value: string) => {
      const found: string[] = [];
      let cursor: string | null = null;
      do {
        const body = JSON.stringify({
          folder: "crash",
          filter: { "/e": value },
          sort: [{ path: "/i" }],
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        const page = (await (await call("POST", "/api/v1/documents/query", key, body)).json()) as any;
        found.push(...page.documents.map((document: { id: string }) => document.id));
        cursor = page.nextCursor;
      } while (cursor);
      return found;
    };
    if ((await queried("[REDACTED]")).join() !== ids.join())
      violations.push("the index does not find every redacted document once, in order");
    const stale = (await Promise.all(ids.slice(0, 20).map((_, i) => queried(`u${i}@example.com`)))).flat();
    if (stale.length > 0) violations.push(`the index keeps entries of old bytes: ${stale.slice(0, 3).join(", ")}`);
    for (const [index, id] of ids.entries()) {
      const versions = ((await (await call("GET", `/api/v1/documents/${id}/versions`, key)).json()) as any).versions.map(
        (version: { version: number }) => version.version,
      );
      if (versions.join() !== "2,1") violations.push(`${id}: versions ${versions.join()}, not one new version`);
      const content = await (await call("GET", `/api/v1/documents/${id}/content`, key)).json();
      if (JSON.stringify(content) !== JSON.stringify({ i: index, e: "[REDACTED]" }))
        violations.push(`${id}: content ${JSON.stringify(content)}`);
      if (violations.length > 20) break;
    }
    return { kills: options.kills, documents: DOCUMENTS, processedAtKills, violations, elapsedMs: performance.now() - started };
  } finally {
    await server?.stop("SIGKILL");
    await database?.drop();
    await removeDataDir(dataDir);
  }
}
