/** The jobs module's SQL: jobs and job_items belong to it alone. Every read for the API is scoped to an account. */
import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Database, Db } from "../../db/client";
import { jobs } from "../../db/schema";
import { type Executor, run } from "../../db/statement";
import type { CursorPosition } from "../documents/cursor";
import type { ItemOutcome } from "./kinds";
import {
  CANCEL,
  CLAIM,
  type ClaimedChunk,
  DISCARD_JOB,
  FAIL,
  FIND_JOB,
  HEARTBEAT,
  INSERT_ITEMS,
  INSERT_JOB,
  JOB_STATE,
  type JobRecord,
  LOCK_ACCOUNT_SUBMISSIONS,
  MARK_ITEMS,
  NOTIFY_SUBMITTED,
  OWNED_ITEMS,
  RECORD_EVENT,
  RELEASE,
  RESULTS_PAGE,
  type ResultRow,
  SETTLE,
  SETTLEABLE,
  SWEEP,
} from "./statements";

export type { JobRecord, ResultRow };

export interface NewJob {
  id: string;
  accountId: string;
  kind: string;
  params: unknown;
  onError: "continue" | "stop";
  documentIds: string[];
  /** made by Kiln itself: never refused for the account's queued-jobs limit */
  internal: boolean;
  now: number;
}

/** The job and its items in one transaction (none is seen before all are there); undefined: the queue is full. */
export async function insertJob(database: Database, job: NewJob): Promise<JobRecord | undefined> {
  return database.sql.begin((tx) => insertJobIn(tx, job));
}

/**
 * The job and its items in the caller's transaction (an index's build is made with its index); the
 * runners are woken (NOTIFY) once it commits. A submission takes the account's submissions lock, so two
 * at once cannot both pass the queued-jobs count. An internal job takes none: it is never refused, so it
 * has no count to keep exact, and an index's build would otherwise hold the account's submissions for as
 * long as its transaction inserts a large folder's items.
 */
export async function insertJobIn(tx: Executor, job: NewJob): Promise<JobRecord | undefined> {
  if (!job.internal) await run(tx, LOCK_ACCOUNT_SUBMISSIONS, [job.accountId]);
  const [inserted] = await run(tx, INSERT_JOB, [
    job.id,
    job.accountId,
    job.kind,
    JSON.stringify(job.params),
    job.onError,
    job.documentIds.length,
    job.internal,
    job.now,
  ]);
  if (inserted) {
    await run(tx, INSERT_ITEMS, [job.id, JSON.stringify(job.documentIds)]);
    await run(tx, NOTIFY_SUBMITTED, []);
  }
  return inserted;
}

/** Drops a job made in the same, still open, transaction (insertJobIn): no runner has seen it. */
export async function discardJob(tx: Executor, jobId: string): Promise<void> {
  await run(tx, DISCARD_JOB, [jobId]);
}

/** Wakes every node's runner: a job was submitted, or a node full of work left some unclaimed. */
export async function notifyRunners(db: Db): Promise<void> {
  await run(db, NOTIFY_SUBMITTED, []);
}

export async function findJob(db: Db, accountId: string, id: string): Promise<JobRecord | undefined> {
  if (id.includes("\u0000")) return undefined;
  return (await run(db, FIND_JOB, [id, accountId]))[0];
}

export async function listJobs(
  db: Db,
  accountId: string,
  options: { after?: CursorPosition; limit: number; state?: string },
): Promise<(typeof jobs.$inferSelect)[]> {
  const conditions: SQL[] = [eq(jobs.accountId, accountId)];
  if (options.state) conditions.push(eq(jobs.state, options.state));
  if (options.after) conditions.push(sql`(${jobs.createdAt}, ${jobs.id}) < (${options.after.createdAt}, ${options.after.id})`);
  return db
    .select()
    .from(jobs)
    .where(and(...conditions))
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(options.limit);
}

/** A cancel, with the cancelled event when a queued job stops at once. */
export async function cancelJob(database: Database, accountId: string, id: string, now: number): Promise<JobRecord | undefined> {
  if (id.includes("\u0000")) return undefined;
  return database.sql.begin(async (tx) => {
    const [row] = await run(tx, CANCEL, [id, accountId, now]);
    if (row?.state === "cancelled") await recordJobEvent(tx, row, now);
    return row;
  });
}

export async function resultsPage(db: Db, jobId: string, afterSeq: number, limit: number): Promise<ResultRow[]> {
  return run(db, RESULTS_PAGE, [jobId, afterSeq, limit]);
}

export async function claimChunk(
  db: Db,
  params: { now: number; chunk: number; claim: string; leaseMs: number; fullAccounts: string[]; kinds: string[] },
): Promise<ClaimedChunk> {
  const [row] = await run(db, CLAIM, [
    params.now,
    params.chunk,
    params.claim,
    params.leaseMs,
    JSON.stringify(params.fullAccounts),
    JSON.stringify(params.kinds),
  ]);
  return row ?? { job: null, items: [] };
}

export async function heartbeat(db: Db, jobId: string, claim: string, leaseUntil: number): Promise<string | undefined> {
  return (await run(db, HEARTBEAT, [jobId, claim, leaseUntil]))[0]?.state;
}

export async function releaseClaim(db: Db, jobId: string, claim: string): Promise<void> {
  await run(db, RELEASE, [jobId, claim]);
}

export const jobState = async (tx: Executor, jobId: string) => (await run(tx, JOB_STATE, [jobId]))[0]?.state;

export async function ownedItems(tx: Executor, jobId: string, claim: string, seqs: number[]): Promise<Set<number>> {
  return new Set((await run(tx, OWNED_ITEMS, [jobId, claim, JSON.stringify(seqs)])).map((row) => row.seq));
}

export async function markItems(tx: Executor, jobId: string, outcomes: Map<number, ItemOutcome>, now: number): Promise<void> {
  const records = [...outcomes].map(([seq, outcome]) => ({
    seq,
    status: outcome.status,
    output_document_id: outcome.outputDocumentId ?? null,
    version: outcome.version ?? null,
    error: outcome.error ?? null,
    output: outcome.output ?? null,
  }));
  await run(tx, MARK_ITEMS, [jobId, JSON.stringify(records), now]);
}

export const settleableJobs = async (db: Db, now: number) => (await run(db, SETTLEABLE, [now])).map((row) => row.id);

export const settleJob = async (tx: Executor, jobId: string, now: number) => (await run(tx, SETTLE, [jobId, now]))[0];

export const failJob = async (tx: Executor, jobId: string, error: { code: string; message: string }, now: number) =>
  (await run(tx, FAIL, [jobId, JSON.stringify(error), now]))[0];

/** job.succeeded, job.failed or job.cancelled, with the job as the API shows it. */
export async function recordJobEvent(tx: Executor, job: JobRecord, now: number): Promise<void> {
  await run(tx, RECORD_EVENT, [job.accountId, `job.${job.state}`, JSON.stringify({ job: jobView(job) }), now]);
}

export async function sweepFinishedJobs(db: Db, before: number, batch: number): Promise<number> {
  return (await run(db, SWEEP, [before, batch])).count;
}

/** A job as the API shows it. */
export function jobView(job: JobRecord | typeof jobs.$inferSelect) {
  return {
    id: job.id,
    kind: job.kind,
    state: job.state as JobRecord["state"],
    progress: { total: job.total, processed: job.processed, succeeded: job.succeeded, failed: job.failed, skipped: job.skipped },
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    ...(job.error ? { error: job.error as NonNullable<JobRecord["error"]> } : {}),
  };
}
