/**
 * Section "jobs": a utility over many stored documents as a job, against what a client does without
 * jobs, and what such a job costs another tenant.
 *
 * - cleanup.redact over 10,000 stored 1 KB documents as one job (output: newVersion), against the same
 *   work as a client loop over HTTP (GET content, POST the utility, PUT the content back, one document
 *   after the other) on 1,000 other documents of the same server: documents per second, target ≥ 5×.
 * - Tenant B's get-metadata p99 (wrk) while tenant A's 10,000-document job runs, against B alone.
 *
 * Both in the same run, on the same server; the machine is shared, so figures move with its load.
 */

import { ms, notes, rows, times } from "./lib/report";
import { ADMIN_KEY, api, type KilnServer, startKiln } from "./lib/servers";
import { load } from "./lib/wrk";
import type { Settings } from "./settings";

const JOB_DOCUMENTS = 10_000;
const LOOP_DOCUMENTS = 1_000;
const CONFIG = { patterns: ["email"] };

/** A 1 KB document with an address to mask. */
const documentOf = (index: number) => ({ index, contact: `user${index}@example.com`, note: "n".repeat(940) });

async function importInto(kiln: KilnServer, key: string, folder: string, count: number): Promise<string[]> {
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ document: { name: `d${index}`, folder }, content: documentOf(index) }),
  );
  const response = await fetch(`${kiln.url}/api/v1/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
    body: `${lines.join("\n")}\n`,
  });
  const ids = (await response.text())
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { id?: string }).id);
  if (ids.some((id) => !id)) throw new Error("jobs: the import failed");
  return ids as string[];
}

/** What a client does without jobs: per document, its content, the utility, the new content. */
async function clientLoop(kiln: KilnServer, ids: string[]): Promise<number> {
  const headers = { authorization: `Bearer ${kiln.key}`, "content-type": "application/json" };
  const started = performance.now();
  for (const id of ids) {
    const content = await (await fetch(`${kiln.url}/api/v1/documents/${id}/content`, { headers })).text();
    const run = await fetch(`${kiln.url}/api/v1/utilities/cleanup.redact`, {
      method: "POST",
      headers,
      body: `{"inputs":{"primary":${content}},"config":${JSON.stringify(CONFIG)}}`,
    });
    const { output } = (await run.json()) as { output: unknown };
    const put = await fetch(`${kiln.url}/api/v1/documents/${id}/content`, { method: "PUT", headers, body: JSON.stringify(output) });
    if (put.status !== 200) throw new Error(`jobs: the client loop's PUT answered ${put.status}`);
  }
  return ids.length / ((performance.now() - started) / 1000);
}

async function submit(kiln: KilnServer, folder: string): Promise<string> {
  const { job } = await api(kiln.url, kiln.key, "POST", "/api/v1/jobs", {
    source: { folder },
    utility: "cleanup.redact",
    config: CONFIG,
    output: { mode: "newVersion" },
  });
  return job.id;
}

async function finished(
  kiln: KilnServer,
  id: string,
): Promise<{ state: string; startedAt: number; finishedAt: number; progress: { succeeded: number } }> {
  for (;;) {
    const { job } = await api(kiln.url, kiln.key, "GET", `/api/v1/jobs/${id}`);
    if (["succeeded", "failed", "cancelled"].includes(job.state)) return job;
    await Bun.sleep(50);
  }
}

export async function benchJobs(settings: Settings): Promise<void> {
  const kiln = await startKiln("embedded");
  try {
    await importInto(kiln, kiln.key, "job", JOB_DOCUMENTS);
    await importInto(kiln, kiln.key, "noisy", JOB_DOCUMENTS);
    const loopIds = await importInto(kiln, kiln.key, "loop", LOOP_DOCUMENTS);

    // 1. the job against the client loop
    const loopRate = await clientLoop(kiln, loopIds);
    const submitted = performance.now();
    const job = await finished(kiln, await submit(kiln, "job"));
    const jobSeconds = (performance.now() - submitted) / 1000;
    if (job.state !== "succeeded" || job.progress.succeeded !== JOB_DOCUMENTS)
      throw new Error(`jobs: the job ended ${JSON.stringify(job)}`);
    const jobRate = JOB_DOCUMENTS / jobSeconds;
    rows.push({
      section: "jobs",
      case: `cleanup.redact over ${JOB_DOCUMENTS.toLocaleString("en")} stored 1 KB documents, newVersion`,
      kiln: `job: ${Math.round(jobRate)} documents/s (${jobSeconds.toFixed(1)} s, submit to succeeded)`,
      reference: `client loop over HTTP (GET content, POST utility, PUT content), ${LOOP_DOCUMENTS.toLocaleString("en")} documents: ${Math.round(loopRate)} documents/s`,
      ratio: `${times(jobRate / loopRate)} faster`,
      target: "≥ 5×",
      met: jobRate / loopRate >= 5,
    });

    // 2. tenant B's reads, alone and while A's job runs
    const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", { name: "tenant-b", rateLimitPerMinute: null });
    const { key: keyB } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", {
      accountId: account.id,
      permissions: ["documents"],
    });
    const idsB = await importInto(kiln, keyB, "b", 100);
    const spec = {
      base: kiln.url,
      method: "GET" as const,
      paths: idsB.map((id) => `/api/v1/documents/${id}`),
      key: keyB,
      connections: 4,
      seconds: settings.loadSeconds + 2,
    };
    const alone = load(spec);
    const noisy = await submit(kiln, "noisy");
    const during = load(spec);
    const { job: after } = await api(kiln.url, kiln.key, "GET", `/api/v1/jobs/${noisy}`);
    const overlapped = after.state === "running";
    await finished(kiln, noisy);
    if (alone.errors + during.errors > 0) notes.push(`jobs: tenant B's load had ${alone.errors + during.errors} errors`);
    rows.push({
      section: "jobs",
      case: "tenant B: get metadata p99 while tenant A's 10,000-document job runs",
      kiln: `${ms(during.p99Ms)} p99 (${Math.round(during.rps)}/s)`,
      reference: `B alone: ${ms(alone.p99Ms)} p99 (${Math.round(alone.rps)}/s)`,
      ratio: `${times(during.p99Ms / alone.p99Ms)} alone`,
    });
    if (!overlapped) notes.push("jobs: A's job finished before B's load did; B's figures under the job cover part of the run only");
  } finally {
    await kiln.stop();
  }
}
