/**
 * A fixed-size pool of Bun Workers for utility runs on large payloads, shared fairly by the accounts.
 * A job is either a whole utility request body or a list of steps with their inputs; every byte input
 * is transferred to the worker (the main thread keeps no copy and parses nothing); the output comes
 * back as UTF-8 chunks (one for a whole-document run), transferred too. A run that outlives its time
 * limit, or whose caller goes away, has its worker terminated and replaced: a worker stuck in a loop
 * cannot be interrupted any other way.
 *
 * Fairness: every run belongs to an account. An account's runs hold at most `accountWorkers` workers
 * at once, even when the others are idle: a run cannot be preempted (stopping it loses its work), so
 * the only way another account's run can start at once while one account floods the pool with 30 s
 * runs is a worker that flood could not take. Runs that cannot start wait in their account's own
 * queue (at most `accountQueueLimit`, all queues together at most `queueLimit`), and a freed worker
 * goes to the accounts in turn (round robin), not to the oldest run: one account's queue never delays
 * another's runs by more than one run per account.
 */
import type { Config } from "../config";
import type { PatchJob } from "../core/json/patch";
import type { SchemaJob } from "../core/json-schema/check";
import { memoryHog } from "./memory-hog";
import type { IndexEntriesJob, StepsJob, ToPool, ToWorker, WorkerJob, WorkerOutcome } from "./messages";
import { AccountBusyError, PoolBusyError, RunCancelledError, RunMemoryError, RunTimeoutError, WorkerCrashedError } from "./pool-errors";
import { withTransfers } from "./transfers";

export interface PoolOptions {
  size: number;
  /** runs that may wait for a worker, every account's together; beyond it a run rejects with PoolBusyError */
  queueLimit: number;
  /** runs of one account that may wait for a worker; beyond it a run rejects with AccountBusyError */
  accountQueueLimit: number;
  /** workers one account's runs may hold at once (at most `size`) */
  accountWorkers: number;
  timeoutMs: number;
  /** URL of the module whose `registry` export the workers run (see utilities/registry.ts) */
  registryModule: string;
  /** each run step's output limit (utilities/budget.ts) */
  maxOutputBytes: number;
  /**
   * The process's resident memory at which the run whose worker brought in the most memory since it
   * started is stopped and its worker replaced (Bun ignores a Worker's resourceLimits, so the pool
   * watches the whole process while runs are under way; ./thread-memory.ts says how a run's share is known).
   */
  memoryLimitBytes?: number;
  /** how often that is checked; tests shorten it */
  memoryCheckMs?: number;
  onWorkerLost?: (reason: string) => void;
}

interface Job {
  accountId: string;
  work: WorkerJob;
  signal?: AbortSignal;
  resolve: (outcome: WorkerOutcome) => void;
  reject: (error: Error) => void;
}

interface Running {
  id: number;
  startedAt: number;
  job: Job;
  /** aborted with the error the run fails with: a RunTimeoutError or a RunCancelledError */
  stop: AbortController;
  /** detaches the listeners on the caller's signal and on the time limit */
  release: () => void;
  /** the worker's thread and its page faults when the run started (the worker says so), for the memory watch */
  thread?: { id: number; faultsAtStart: number };
}

interface Slot {
  /** undefined after a crash: the next run spawns a new one (a worker that cannot start never loops) */
  worker?: Worker;
  running?: Running;
}

const WORKER_URL = new URL("./worker.ts", import.meta.url);

/** How long a terminated worker's memory takes to come back here (426 MiB: under 2 s). */
const MEMORY_RELEASE_MS = 2_000;

/** Smaller outputs are not given back: their page faults cost less than the message that would return them. */
const RECYCLED_MIN_BYTES = 1024 * 1024;

export class WorkerPool {
  private readonly slots: Slot[] = [];
  /** each account's waiting runs, accounts in the order of their turns: an account served moves to the end */
  private readonly waiting = new Map<string, Job[]>();
  private nextJobId = 1;
  private stopped = false;
  /** the worker that wrote each single-buffer output of RECYCLED_MIN_BYTES or more, for recycle() */
  private readonly writers = new WeakMap<ArrayBuffer, Worker>();
  /** workers replaced after a timeout, a cancellation, a crash or the memory limit */
  replacements = 0;
  /** runs stopped because the process passed the memory limit */
  memoryStops = 0;
  /** runs refused since start: `account` past the account's queue limit, `pool` past the pool's */
  readonly refusals = { account: 0, pool: 0 };
  private memoryWatch?: ReturnType<typeof setInterval>;
  /** a stopped worker's memory takes up to a second or two to be given back: no other run is stopped meanwhile */
  private memoryQuietUntil = 0;

  /** Workers are spawned by start(), or else lazily by the first runs that need them. */
  constructor(private readonly options: PoolOptions) {
    for (let i = 0; i < options.size; i++) this.slots.push({});
  }

  /** Spawns every worker now (at boot), so that the first requests do not pay their start-up. */
  start(): this {
    for (const slot of this.slots) slot.worker ??= this.spawn();
    return this;
  }

  get busy(): number {
    return this.slots.filter((slot) => slot.running).length;
  }

  get queued(): number {
    let count = 0;
    for (const jobs of this.waiting.values()) count += jobs.length;
    return count;
  }

  /** Accounts with at least one run waiting for a worker. */
  get accountsWaiting(): number {
    return this.waiting.size;
  }

  /** Runs one utility request body of the account's in a worker. `bytes` is transferred: the caller's view of it is detached. */
  run(accountId: string, utilityId: string, bytes: Uint8Array, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit(accountId, { kind: "request", utilityId, bytes }, signal);
  }

  /**
   * Runs steps in a worker, in one hop. The buffers behind the byte inputs are transferred whole: they
   * must belong to this run (a request body made whole, a document read for it).
   */
  runSteps(accountId: string, job: StepsJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit(accountId, { kind: "steps", ...job }, signal);
  }

  /** Reads a patch, and applies it when the job has the document, in a worker; the job's byte inputs are transferred. */
  runPatch(accountId: string, job: PatchJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit(accountId, { kind: "patch", ...job }, signal);
  }

  /** Validates a document against a schema in a worker; the document's bytes are transferred. */
  runSchema(accountId: string, job: SchemaJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit(accountId, { kind: "schema", ...job }, signal);
  }

  /** Computes a stored document's query index entries in a worker; the document's bytes are transferred. */
  runIndexEntries(accountId: string, job: IndexEntriesJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit(accountId, { kind: "indexEntries", ...job }, signal);
  }

  private submit(accountId: string, work: WorkerJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return new Promise((resolve, reject) => {
      if (this.stopped) return reject(new PoolBusyError("the worker pool is shutting down"));
      if (signal?.aborted) return reject(new RunCancelledError("the run was cancelled before it started"));
      const job: Job = { accountId, work, signal, resolve, reject };
      const waiting = this.waiting.get(accountId);
      // an account with runs waiting is at its share or finds no idle worker: this run waits behind them
      if (!waiting && this.runningFor(accountId) < this.options.accountWorkers) {
        const idle = this.slots.find((slot) => !slot.running);
        if (idle) return this.dispatch(idle, job);
      }
      if ((waiting?.length ?? 0) >= this.options.accountQueueLimit) {
        this.refusals.account++;
        return reject(new AccountBusyError(this.options.accountQueueLimit, this.options.accountWorkers));
      }
      if (this.queued >= this.options.queueLimit) {
        this.refusals.pool++;
        return reject(new PoolBusyError("every utility worker is busy and the queue is full (UTILITY_QUEUE_LIMIT)"));
      }
      if (waiting) waiting.push(job);
      else this.waiting.set(accountId, [job]);
      signal?.addEventListener("abort", () => this.dequeue(job), { once: true });
    });
  }

  /**
   * Gives a run's one output buffer back to the worker that wrote it, once the caller has copied it
   * (into the response) or saved it: that worker's next output reuses its memory, where a fresh buffer
   * costs a page fault per 4 KiB (bench/README.md, Memory). `output` is detached; one under
   * RECYCLED_MIN_BYTES was never recorded and stays the caller's.
   */
  recycle(output: Uint8Array): void {
    const buffer = output.buffer as ArrayBuffer;
    const writer = this.writers.get(buffer);
    if (!writer || !this.slots.some((slot) => slot.worker === writer)) return;
    this.writers.delete(buffer);
    writer.postMessage({ type: "recycle", buffer } satisfies ToWorker, [buffer]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.memoryWatch);
    for (const jobs of this.waiting.values()) for (const job of jobs) job.reject(new PoolBusyError("the worker pool is shutting down"));
    this.waiting.clear();
    for (const slot of this.slots.splice(0)) {
      slot.running?.release();
      slot.running?.job.reject(new PoolBusyError("the worker pool is shutting down"));
      slot.worker?.terminate();
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL);
    worker.postMessage({
      type: "init",
      registryModule: this.options.registryModule,
      maxOutputBytes: this.options.maxOutputBytes,
    } satisfies ToWorker);
    worker.addEventListener("message", (event: MessageEvent<ToPool>) => this.receive(worker, event.data));
    worker.addEventListener("error", (event) => this.lose(worker, `worker error: ${(event as ErrorEvent).message}`));
    worker.addEventListener("close", () => this.lose(worker, "worker exited"));
    return worker;
  }

  private dispatch(slot: Slot, job: Job): void {
    const worker = slot.worker ?? this.spawn();
    slot.worker = worker;
    const id = this.nextJobId++;
    const stop = new AbortController();
    const cancel = () => stop.abort(new RunCancelledError("the run was cancelled"));
    job.signal?.addEventListener("abort", cancel, { once: true });
    stop.signal.addEventListener(
      "abort",
      () => {
        this.replace(slot);
        job.reject(stop.signal.reason);
      },
      { once: true },
    );
    slot.running = { id, startedAt: performance.now(), job, stop, release: () => job.signal?.removeEventListener("abort", cancel) };
    this.watchMemory();
    const { work, transfer } = withTransfers(job.work);
    worker.postMessage({ type: "run", jobId: id, job: work } satisfies ToWorker, transfer);
  }

  private receive(worker: Worker, message: ToPool): void {
    const slot = this.slots.find((candidate) => candidate.worker === worker);
    const running = slot?.running;
    if (!slot || !running || running.id !== message.jobId) return;
    if (message.type === "started") {
      if (message.threadId !== undefined && message.pageFaults !== undefined)
        running.thread = { id: message.threadId, faultsAtStart: message.pageFaults };
      return this.limitTime(running);
    }
    running.release();
    slot.running = undefined;
    const { outcome } = message;
    const output = outcome.ok && "outputChunks" in outcome && outcome.outputChunks.length === 1 ? outcome.outputChunks[0] : undefined;
    if (output && output.buffer.byteLength >= RECYCLED_MIN_BYTES) this.writers.set(output.buffer as ArrayBuffer, worker);
    running.job.resolve(outcome);
    this.pump();
  }

  /**
   * While any run is under way, checks the process's memory; past the limit the run whose worker
   * brought in the most memory since it started is stopped (memoryHog). Per node by design: it watches
   * this process's memory, from the first run under way to the last.
   */
  private watchMemory(): void {
    const limit = this.options.memoryLimitBytes;
    if (limit === undefined || this.memoryWatch) return;
    this.memoryWatch = setInterval(() => {
      const running = this.slots.map((slot) => slot.running).filter((run): run is Running => run !== undefined);
      if (running.length === 0) {
        clearInterval(this.memoryWatch);
        this.memoryWatch = undefined;
        return;
      }
      const rss = process.memoryUsage.rss();
      if (performance.now() < this.memoryQuietUntil || rss <= limit) return;
      const hog = memoryHog(running, rss - limit);
      if (!hog) return;
      this.memoryQuietUntil = performance.now() + MEMORY_RELEASE_MS;
      this.memoryStops++;
      hog.stop.abort(new RunMemoryError(`the server's memory passed ${limit} bytes and this run had brought in the most of it`));
    }, this.options.memoryCheckMs ?? 50);
    this.memoryWatch.unref?.();
  }

  private limitTime(running: Running): void {
    const limit = AbortSignal.timeout(this.options.timeoutMs);
    const expire = () => running.stop.abort(new RunTimeoutError(`the run exceeded ${this.options.timeoutMs} ms`));
    limit.addEventListener("abort", expire, { once: true });
    const releaseCaller = running.release;
    running.release = () => {
      releaseCaller();
      limit.removeEventListener("abort", expire);
    };
  }

  /** A worker died on its own: fail its run; the slot gets a new worker when it next has work. */
  private lose(worker: Worker, reason: string): void {
    const slot = this.slots.find((candidate) => candidate.worker === worker);
    if (!slot) return;
    this.options.onWorkerLost?.(reason);
    const running = slot.running;
    this.replace(slot, { respawn: false });
    running?.job.reject(new WorkerCrashedError("the utility worker stopped while processing this input"));
  }

  /** Terminates the slot's worker, whatever it is doing, and hands the idle workers to waiting runs. */
  private replace(slot: Slot, options = { respawn: true }): void {
    const old = slot.worker;
    slot.running?.release();
    slot.running = undefined;
    slot.worker = options.respawn ? this.spawn() : undefined;
    this.replacements++;
    old?.terminate();
    this.pump();
  }

  private runningFor(accountId: string): number {
    return this.slots.filter((slot) => slot.running?.job.accountId === accountId).length;
  }

  /** Gives each idle worker the next waiting run in turn (nextWaiting), until none may start. */
  private pump(): void {
    for (const slot of this.slots) {
      if (slot.running) continue;
      const job = this.nextWaiting();
      if (!job) return;
      this.dispatch(slot, job);
    }
  }

  /**
   * The first waiting run of the first account, in turn, that holds fewer than its share of workers;
   * that account's turn moves to the end.
   */
  private nextWaiting(): Job | undefined {
    for (const [accountId, jobs] of this.waiting) {
      if (this.runningFor(accountId) >= this.options.accountWorkers) continue;
      const job = jobs.shift();
      this.waiting.delete(accountId);
      if (jobs.length > 0) this.waiting.set(accountId, jobs);
      return job;
    }
    return undefined;
  }

  private dequeue(job: Job): void {
    const jobs = this.waiting.get(job.accountId);
    const index = jobs?.indexOf(job) ?? -1;
    if (!jobs || index === -1) return;
    jobs.splice(index, 1);
    if (jobs.length === 0) this.waiting.delete(job.accountId);
    job.reject(new RunCancelledError("the run was cancelled while waiting for a worker"));
  }
}

/** The pool the configuration asks for; call start() to spawn its workers up front. */
export function createWorkerPool(
  config: Pick<
    Config,
    | "utilityWorkers"
    | "utilityQueueLimit"
    | "utilityQueuePerAccount"
    | "utilityWorkersPerAccount"
    | "utilityTimeoutMs"
    | "utilityMaxOutputBytes"
    | "utilityMemoryLimitBytes"
  >,
  registryModule: string,
  onWorkerLost?: (reason: string) => void,
): WorkerPool {
  return new WorkerPool({
    size: config.utilityWorkers,
    queueLimit: config.utilityQueueLimit,
    accountQueueLimit: config.utilityQueuePerAccount,
    accountWorkers: config.utilityWorkersPerAccount,
    timeoutMs: config.utilityTimeoutMs,
    maxOutputBytes: config.utilityMaxOutputBytes,
    memoryLimitBytes: config.utilityMemoryLimitBytes,
    registryModule,
    onWorkerLost,
  });
}
