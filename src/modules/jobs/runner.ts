/**
 * The job runner: every node claims chunks of job items and works on them. A claim (one statement,
 * statements.ts CLAIM) takes up to JOBS_CHUNK_SIZE pending items of the active job whose last claim is
 * oldest, so jobs (and through them accounts) take turns, and skips the accounts that already have
 * JOBS_ACCOUNT_CONCURRENCY chunks in work on this node; a node works on at most JOBS_CONCURRENCY chunks.
 * A queued job starts with its first claim, once its account runs fewer than its plan's maxRunningJobs.
 *
 * A chunk is worked on outside any transaction: the credits of its documents are reserved (one per step,
 * as for single runs), each item is prepared by its kind (read, run in the worker pool under the
 * account's worker share, content written to the store), then one short transaction locks the job and
 * the items this claim still holds, writes their effects and marks them done (kinds.ts). A heartbeat
 * every quarter second (at most a third of JOBS_LEASE_MS) renews the lease and reads the job's state: a
 * cancel aborts the chunk at once, and the work prepared but not committed is dropped. A node that dies
 * stops renewing; once its lease has run out, another node claims the items again, and the commit of
 * the first, should it come back, finds them no longer its own and writes nothing. The credits of the
 * documents that did not succeed are given back; when the month's credits run out, the job fails with
 * credits_exhausted.
 *
 * A job finishes (succeeded once no item is pending, cancelled once no chunk of a cancelling job is
 * under a live lease) in a transaction with its event (job.succeeded, job.failed, job.cancelled) and its
 * kind's onFinished; each node looks for such jobs at every turn.
 *
 * Cluster-once: every node runs the loop; items are claimed with FOR UPDATE SKIP LOCKED under a lease
 * and marked done only by a transaction that still holds them, so each document's effect is written
 * once; a job is finished by the one conditional UPDATE that moves its state, under its row lock.
 */
import type { JobsConfig } from "../../config";
import { type BackgroundWork, type Running, Wakeable } from "../../core/background";
import { ERRORS } from "../../core/error-codes";
import { databaseFault, HttpError, httpError } from "../../core/errors";
import type { Database } from "../../db/client";
import type { Executor } from "../../db/statement";
import type { Logger } from "../../observability/logger";
import type { Metrics } from "../../observability/metrics";
import { ContentStoreUnavailable } from "../../storage/content-store";
import { creditPeriodStart } from "../usage/service";
import { refundCredits, reserveCredits } from "../utilities/repository";
import { type ClaimedJob, type ItemOutcome, type ItemProblem, type JobItem, type JobKind, type JobKinds, PrepareAgain } from "./kinds";
import {
  claimChunk,
  failJob,
  heartbeat,
  type JobRecord,
  jobState,
  markItems,
  notifyRunners,
  ownedItems,
  recordJobEvent,
  releaseClaim,
  settleableJobs,
  settleJob,
} from "./repository";

export interface RunnerOptions {
  database: Database;
  kinds: JobKinds;
  config: JobsConfig;
  logger: Logger;
  now?: () => number;
  /** this process's metrics (none without METRICS_TOKEN) */
  metrics?: Metrics;
  /** how often an idle runner looks for work (a submission's notification wakes it sooner) */
  pollMs?: number;
}

/** Items of one chunk prepared at once: while one runs in a worker, the others are read and their outputs stored. */
const PREPARE_CONCURRENCY = 8;
/** Times an item is prepared at most when its commits ask for it again (PrepareAgain, kinds.ts). */
const PREPARE_ATTEMPTS = 5;
/** a run refused because the account's (or the node's) worker queue is full is tried again after this */
const BUSY_RETRY_MS = 50;

type Prepared = { ok: true; value: unknown } | { ok: false; problem: ItemProblem; charged: boolean };

/** What one document's result keeps of its error, so a job's results stay bounded whatever its documents hold. */
const MESSAGE_MAX = 1_000;
const ERRORS_MAX = 20;

const problemOf = (error: unknown): { problem: ItemProblem; charged: boolean } => {
  if (error instanceof HttpError) {
    const problem = {
      code: error.code,
      message: error.message.slice(0, MESSAGE_MAX),
      ...(error.extra.errors ? { errors: error.extra.errors.slice(0, ERRORS_MAX) } : {}),
    };
    return { problem, charged: error.extra.charged === true };
  }
  return { problem: { code: ERRORS.internal_error.code, message: "The document could not be processed" }, charged: false };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A document whose preparation meets a passing fault is prepared again after each of these (3.1 s in all), then fails. */
const FAULT_RETRY_DELAYS_MS = [100, 500, 2_500];

/** The 503 problem of a fault that may pass (core/errors.ts, databaseFault; the content store unavailable), else undefined. */
function passingFault(error: unknown): HttpError | undefined {
  if (error instanceof ContentStoreUnavailable) return httpError(ERRORS.content_store_unavailable, "The content store cannot be reached");
  if (error instanceof HttpError) return error.status === 503 ? error : undefined;
  return databaseFault(error)?.error;
}

/** The runner as the node's background work (src/index.ts). */
export const jobRunner = (options: RunnerOptions): BackgroundWork => ({
  name: "job runner",
  clusterOnce: ["SKIP LOCKED claim"],
  start: () => startJobRunner(options),
});

export interface JobRunnerHandle extends Running {
  wake(): void;
}

export function startJobRunner(options: RunnerOptions): JobRunnerHandle {
  const { database, config, logger, kinds } = options;
  const db = database.db;
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 1_000;
  const heartbeatMs = Math.min(250, Math.floor(config.leaseMs / 3));
  const running = new Set<Promise<void>>();
  const byAccount = new Map<string, number>();
  let stopped = false;
  const waker = new Wakeable();
  const wake = waker.wake;
  const listening = database.sql.listen("kiln_jobs", wake).catch(() => undefined);
  options.metrics?.watchJobChunks(() => running.size);

  /** Finishes the job in `tx` as `row` (already updated), with its event and its kind's part. */
  async function finished(tx: Executor, row: JobRecord | undefined): Promise<void> {
    if (!row) return;
    await recordJobEvent(tx, row, now());
    await kinds.get(row.kind)?.onFinished?.(tx, row);
  }

  async function settle(jobId: string): Promise<void> {
    await database.sql.begin(async (tx) => finished(tx, await settleJob(tx, jobId, now())));
  }

  async function fail(jobId: string, error: ItemProblem): Promise<void> {
    await database.sql.begin(async (tx) => finished(tx, await failJob(tx, jobId, error, now())));
  }

  function countDocuments(kind: string, committed: Iterable<ItemOutcome>): void {
    if (!options.metrics) return;
    const byStatus = new Map<string, number>();
    for (const { status } of committed) byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    for (const [status, count] of byStatus) options.metrics.observeJobDocuments(kind, status, count);
  }

  /** Credits for `count` documents, or as many as are left (one by one once the chunk's do not fit). */
  async function reserve(job: ClaimedJob, perItem: number, count: number): Promise<{ affordable: number; periodStart: number }> {
    const periodStart = creditPeriodStart(now());
    if (perItem === 0 || (await reserveCredits(db, job.accountId, periodStart, perItem * count))) return { affordable: count, periodStart };
    let affordable = 0;
    while (affordable < count && (await reserveCredits(db, job.accountId, periodStart, perItem))) affordable++;
    return { affordable, periodStart };
  }

  /**
   * The kind's prepare, again while the worker queue is full, and again after a passing fault (the
   * database or the content store not answering, a rolled-back conflict, a bound run out) after each of
   * FAULT_RETRY_DELAYS_MS; a fault that outlasts them fails the document with its 503 problem.
   */
  async function prepare(kind: JobKind, item: JobItem): Promise<unknown> {
    for (let faults = 0; ; ) {
      try {
        return await kind.prepare(item);
      } catch (error) {
        if (item.signal.aborted) throw error;
        const busy = error instanceof HttpError && (error.code === ERRORS.account_busy.code || error.code === ERRORS.busy.code);
        if (busy) {
          await sleep(BUSY_RETRY_MS);
          continue;
        }
        const fault = passingFault(error);
        if (!fault) throw error;
        if (faults === FAULT_RETRY_DELAYS_MS.length) throw fault;
        await sleep(FAULT_RETRY_DELAYS_MS[faults++]!);
      }
    }
  }

  /**
   * The items' effects and their marks, in one transaction; undefined when the job is no longer running
   * (nothing written). `oneByOne`: each item's commit under a savepoint, an HttpError failing it alone,
   * a PrepareAgain leaving it pending (`again`) unless it is the `last` try (then it fails).
   */
  function commit(kind: JobKind, items: JobItem[], prepared: Map<number, Prepared>, claim: string, oneByOne: boolean, last: boolean) {
    const job = items[0]!.job;
    return database.sql.begin(async (tx) => {
      if ((await jobState(tx, job.id)) !== "running") return undefined;
      const owned = await ownedItems(
        tx,
        job.id,
        claim,
        items.map((item) => item.seq),
      );
      const again = new Set<number>();
      const commitOne = async (item: JobItem): Promise<ItemOutcome | undefined> => {
        const ready = prepared.get(item.seq)!;
        if (!ready.ok) return { status: "failed", error: ready.problem };
        if (!oneByOne) return kind.commit(tx, item, ready.value);
        try {
          return await tx.savepoint((point) => kind.commit(point, item, ready.value));
        } catch (error) {
          if (error instanceof PrepareAgain && !last) return void again.add(item.seq);
          if (error instanceof PrepareAgain)
            return { status: "failed", error: { code: ERRORS.edit_conflict.code, message: error.message } };
          if (!(error instanceof HttpError)) throw error;
          return { status: "failed", error: problemOf(error).problem };
        }
      };
      const mine = items.filter((item) => owned.has(item.seq));
      if (kind.lockChunk && mine.length > 0)
        await kind.lockChunk(
          tx,
          mine.filter((item) => prepared.get(item.seq)!.ok),
        );
      const outcomes = new Map<number, ItemOutcome>();
      const keep = (seq: number, outcome: ItemOutcome | undefined) => outcome && outcomes.set(seq, outcome);
      if (oneByOne) for (const item of mine) keep(item.seq, await commitOne(item));
      else
        for (const [seq, outcome] of await Promise.all(mine.map(async (item) => [item.seq, await commitOne(item)] as const)))
          keep(seq, outcome);
      await markItems(tx, job.id, outcomes, now());
      const failure = job.onError === "stop" ? [...outcomes.entries()].find(([, outcome]) => outcome.status === "failed") : undefined;
      if (failure) {
        const [seq, outcome] = failure;
        const documentId = items.find((item) => item.seq === seq)!.documentId;
        const message = `Document '${documentId}' failed (${outcome.error!.message}); the job stopped there (onError: stop)`;
        await finished(tx, await failJob(tx, job.id, { code: outcome.error!.code, message }, now()));
      }
      return { outcomes, again };
    });
  }

  /** Prepares, commits and settles `round`; the items to prepare again (their commits asked for it), or undefined when nothing was committed. */
  async function attempt(
    kind: JobKind,
    round: JobItem[],
    prepared: Map<number, Prepared>,
    claim: string,
    tries: number,
    signal: AbortSignal,
  ) {
    for (const item of round) item.attempt = tries;
    let next = 0;
    const prepareNext = async (): Promise<void> => {
      while (next < round.length && !signal.aborted) {
        const item = round[next++]!;
        try {
          prepared.set(item.seq, { ok: true, value: await prepare(kind, item) });
        } catch (error) {
          prepared.set(item.seq, { ok: false, ...problemOf(error) });
        }
      }
    };
    await Promise.all(Array.from({ length: PREPARE_CONCURRENCY }, prepareNext));
    let done: Awaited<ReturnType<typeof commit>>;
    if (!signal.aborted) {
      const last = tries === PREPARE_ATTEMPTS - 1;
      try {
        done = await commit(kind, round, prepared, claim, false, last);
      } catch {
        done = await commit(kind, round, prepared, claim, true, last);
      }
    }
    for (const item of round) {
      const ready = prepared.get(item.seq);
      if (ready?.ok) await kind.settled?.(item, ready.value, done?.outcomes.get(item.seq)).catch(() => {});
    }
    return done;
  }

  async function work(job: ClaimedJob, claimed: { seq: number; documentId: string }[], claim: string): Promise<void> {
    const kind = kinds.get(job.kind)!;
    const controller = new AbortController();
    const beat = setInterval(() => {
      heartbeat(db, job.id, claim, now() + config.leaseMs).then(
        (state) => state !== "running" && controller.abort(),
        () => {},
      );
    }, heartbeatMs);
    try {
      const perItem = kind.creditsPerItem(job);
      const { affordable, periodStart } = await reserve(job, perItem, claimed.length);
      const items: JobItem[] = claimed.slice(0, affordable).map((item) => ({ job, ...item, signal: controller.signal }));
      const prepared = new Map<number, Prepared>();
      const outcomes = new Map<number, ItemOutcome>();
      let round = items;
      for (let tries = 0; round.length > 0; tries++) {
        const done = await attempt(kind, round, prepared, claim, tries, controller.signal);
        if (!done) break;
        for (const [seq, outcome] of done.outcomes) outcomes.set(seq, outcome);
        countDocuments(job.kind, done.outcomes.values());
        round = round.filter((item) => done.again.has(item.seq));
      }
      const charged = items.filter((item) => {
        const ready = prepared.get(item.seq);
        return outcomes.get(item.seq)?.status === "succeeded" || (ready !== undefined && !ready.ok && ready.charged);
      }).length;
      if (perItem > 0 && affordable > charged) await refundCredits(db, job.accountId, periodStart, perItem * (affordable - charged));
      // which node did what: a job's chunks spread over the nodes (the multi-node suite reads these lines)
      logger.log("info", "job chunk done", { jobId: job.id, items: items.length, committed: outcomes.size });
      if (affordable < claimed.length) {
        await fail(job.id, {
          code: ERRORS.credits_exhausted.code,
          message: "The account's monthly utility credits ran out; the documents not yet processed were left as they are",
        });
      }
    } finally {
      clearInterval(beat);
    }
  }

  function launch(job: ClaimedJob, items: { seq: number; documentId: string }[], claim: string): void {
    byAccount.set(job.accountId, (byAccount.get(job.accountId) ?? 0) + 1);
    const task: Promise<void> = work(job, items, claim)
      .catch((error) => logger.log("error", "job chunk failed", { jobId: job.id, error: (error as Error).message }))
      .then(() => releaseClaim(db, job.id, claim))
      .then(() => settle(job.id))
      .catch((error) => logger.log("error", "job chunk could not be released", { jobId: job.id, error: (error as Error).message }))
      .finally(() => {
        running.delete(task);
        const left = (byAccount.get(job.accountId) ?? 1) - 1;
        if (left > 0) byAccount.set(job.accountId, left);
        else byAccount.delete(job.accountId);
        wake();
      });
    running.add(task);
  }

  async function turn(): Promise<void> {
    for (const jobId of await settleableJobs(db, now())) await settle(jobId);
    let fullChunk = false;
    while (!stopped && running.size < config.concurrency) {
      const full = [...byAccount].filter(([, count]) => count >= config.accountConcurrency).map(([accountId]) => accountId);
      const claim = crypto.randomUUID();
      const { job, items } = await claimChunk(db, {
        now: now(),
        chunk: config.chunkSize,
        claim,
        leaseMs: config.leaseMs,
        fullAccounts: full,
        kinds: kinds.names(),
      });
      if (!job || items.length === 0) break;
      launch(job, items, claim);
      fullChunk = items.length === config.chunkSize;
    }
    // this turn took full chunks, so work may be left that this node cannot take (it, or the account on
    // it, is full): the idle nodes take it now rather than at their next poll
    if (fullChunk && !stopped) await notifyRunners(db);
  }

  const loop = (async () => {
    await listening;
    while (!stopped) {
      waker.woken = false;
      await turn().catch((error) => {
        if (!stopped) logger.log("error", "job claim failed", { error: (error as Error).message });
      });
      if (stopped) break;
      if (!waker.woken) await waker.pause(pollMs);
    }
  })();

  return {
    wake,
    async stop() {
      stopped = true;
      wake();
      await loop;
      await Promise.allSettled([...running]);
      await (await listening)?.unlisten().catch(() => {});
    },
  };
}
