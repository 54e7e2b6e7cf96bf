/**
 * A fixed-size pool of Bun Workers for utility runs on large payloads, with a bounded queue. A job is
 * either a whole utility request body or a list of steps with their inputs; every byte input is
 * transferred to the worker (the main thread keeps no copy and parses nothing); the output comes back
 * as UTF-8 chunks (one for a whole-document run), transferred too. A run that outlives its time
 * limit, or whose caller goes away, has its worker terminated and replaced: a worker stuck in a loop
 * cannot be interrupted any other way.
 */
import type { Config } from "../config";
import type { PatchJob } from "../core/json/patch";
import type { StepsJob, ToPool, ToWorker, WorkerJob, WorkerOutcome } from "./messages";

/** Every worker is busy and the queue is full. */
export class PoolBusyError extends Error {}
/** The run took longer than the pool's time limit. */
export class RunTimeoutError extends Error {}
/** The caller's signal aborted the run (e.g. the client disconnected). */
export class RunCancelledError extends Error {}
/** The worker died while running (out of memory, exit). */
export class WorkerCrashedError extends Error {}
/** The process's memory passed the pool's limit while this run was the longest running: it was stopped. */
export class RunMemoryError extends Error {}

export interface PoolOptions {
  size: number;
  /** runs that may wait for a worker; beyond it `run` rejects with PoolBusyError */
  queueLimit: number;
  timeoutMs: number;
  /** URL of the module whose `registry` export the workers run (see utilities/registry.ts) */
  registryModule: string;
  /** each run step's output limit (utilities/budget.ts) */
  maxOutputBytes: number;
  /**
   * The process's resident memory at which the longest running run is stopped and its worker replaced
   * (Bun ignores a Worker's resourceLimits, so the pool watches the whole process while runs are under way).
   */
  memoryLimitBytes?: number;
  /** how often that is checked; tests shorten it */
  memoryCheckMs?: number;
  onWorkerLost?: (reason: string) => void;
}

interface Job {
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
  private readonly queue: Job[] = [];
  private nextJobId = 1;
  private stopped = false;
  /** the worker that wrote each single-buffer output of RECYCLED_MIN_BYTES or more, for recycle() */
  private readonly writers = new WeakMap<ArrayBuffer, Worker>();
  /** workers replaced after a timeout, a cancellation, a crash or the memory limit */
  replacements = 0;
  /** runs stopped because the process passed the memory limit */
  memoryStops = 0;
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
    return this.queue.length;
  }

  /** Runs one utility request body in a worker. `bytes` is transferred: the caller's view of it is detached. */
  run(utilityId: string, bytes: Uint8Array, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit({ kind: "request", utilityId, bytes }, signal);
  }

  /**
   * Runs steps in a worker, in one hop. The buffers behind the byte inputs are transferred whole: they
   * must belong to this run (a request body made whole, a document read for it).
   */
  runSteps(job: StepsJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit({ kind: "steps", ...job }, signal);
  }

  /** Reads a patch, and applies it when the job has the document, in a worker; the job's byte inputs are transferred. */
  runPatch(job: PatchJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return this.submit({ kind: "patch", ...job }, signal);
  }

  private submit(work: WorkerJob, signal?: AbortSignal): Promise<WorkerOutcome> {
    return new Promise((resolve, reject) => {
      if (this.stopped) return reject(new PoolBusyError("the worker pool is shutting down"));
      if (signal?.aborted) return reject(new RunCancelledError("the run was cancelled before it started"));
      const job: Job = { work, signal, resolve, reject };
      const idle = this.slots.find((slot) => !slot.running);
      if (idle) return this.dispatch(idle, job);
      if (this.queue.length >= this.options.queueLimit)
        return reject(new PoolBusyError("every utility worker is busy and the queue is full"));
      this.queue.push(job);
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
    for (const job of this.queue.splice(0)) job.reject(new PoolBusyError("the worker pool is shutting down"));
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
    if (job.signal?.aborted) {
      job.reject(new RunCancelledError("the run was cancelled while waiting for a worker"));
      return this.next(slot);
    }
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
    if (message.type === "started") return this.limitTime(running);
    running.release();
    slot.running = undefined;
    const { outcome } = message;
    const output = outcome.ok && "outputChunks" in outcome && outcome.outputChunks.length === 1 ? outcome.outputChunks[0] : undefined;
    if (output && output.buffer.byteLength >= RECYCLED_MIN_BYTES) this.writers.set(output.buffer as ArrayBuffer, worker);
    running.job.resolve(outcome);
    this.next(slot);
  }

  /** While any run is under way, checks the process's memory; past the limit the longest running run is stopped. */
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
      if (performance.now() < this.memoryQuietUntil || process.memoryUsage.rss() <= limit) return;
      this.memoryQuietUntil = performance.now() + MEMORY_RELEASE_MS;
      const oldest = running.reduce((a, b) => (b.startedAt < a.startedAt ? b : a));
      this.memoryStops++;
      oldest.stop.abort(new RunMemoryError(`the server's memory passed ${limit} bytes while this run was under way`));
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

  /** Terminates the slot's worker, whatever it is doing, and hands the slot the next queued run. */
  private replace(slot: Slot, options = { respawn: true }): void {
    const old = slot.worker;
    slot.running?.release();
    slot.running = undefined;
    slot.worker = options.respawn ? this.spawn() : undefined;
    this.replacements++;
    old?.terminate();
    this.next(slot);
  }

  private next(slot: Slot): void {
    const job = this.queue.shift();
    if (job) this.dispatch(slot, job);
  }

  private dequeue(job: Job): void {
    const index = this.queue.indexOf(job);
    if (index === -1) return;
    this.queue.splice(index, 1);
    job.reject(new RunCancelledError("the run was cancelled while waiting for a worker"));
  }
}

/** The job as posted, and the buffers it moves to the worker. */
function withTransfers(work: WorkerJob): { work: WorkerJob; transfer: ArrayBuffer[] } {
  if (work.kind === "request") {
    const bytes = transferable(work.bytes);
    return { work: { ...work, bytes }, transfer: [bytes.buffer] };
  }
  if (work.kind === "patch") {
    const patch = transferable(work.patch);
    const document = work.document && transferable(work.document);
    return { work: { ...work, patch, document }, transfer: [patch.buffer, ...(document ? [document.buffer] : [])] };
  }
  const sources = [work.primary, ...work.steps.map((step) => step.secondary)];
  const buffers = new Set<ArrayBuffer>();
  for (const source of sources)
    if (source && "json" in source && source.json.buffer instanceof ArrayBuffer) buffers.add(source.json.buffer);
  return { work, transfer: [...buffers] };
}

/** A view that owns its whole buffer, so transferring it moves exactly the request bytes. */
export function transferable(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return whole ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
}

/** The pool the configuration asks for; call start() to spawn its workers up front. */
export function createWorkerPool(
  config: Pick<Config, "utilityWorkers" | "utilityQueueLimit" | "utilityTimeoutMs" | "utilityMaxOutputBytes" | "utilityMemoryLimitBytes">,
  registryModule: string,
  onWorkerLost?: (reason: string) => void,
): WorkerPool {
  return new WorkerPool({
    size: config.utilityWorkers,
    queueLimit: config.utilityQueueLimit,
    timeoutMs: config.utilityTimeoutMs,
    maxOutputBytes: config.utilityMaxOutputBytes,
    memoryLimitBytes: config.utilityMemoryLimitBytes,
    registryModule,
    onWorkerLost,
  });
}
