/**
 * The process's Prometheus metrics: one registry per process (unset METRICS_TOKEN: none, nothing is
 * measured), observed by requests and background work alike and served by GET /metrics (http/metrics.ts).
 * Labels are bounded sets only: route templates (never raw paths or ids), statuses, utility ids from the
 * registry, error codes.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { WorkerPool } from "../engine/pool";
import type { ContentStore } from "../storage/content-store";

export type SweepKind = "purge" | "orphans";
export type WebhookAttemptOutcome = "succeeded" | "retrying" | "failed";
/** who read the events feed for the live streams: an account's read shared by its streams, or one stream catching up */
export type EventFeedReader = "shared" | "stream";
/** the limit that refused an event stream */
export type EventStreamLimit = "key" | "account" | "process";

export interface Metrics {
  readonly registry: Registry;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** outcome: "ok", or the error code the run ended with */
  observeUtilityRun(utilityId: string, outcome: string, seconds: number): void;
  /**
   * A run small enough for the main thread ran in a worker (runLabel: its utility id, or "pipeline"):
   * it passed UTILITY_INLINE_BUDGET_MS there ("budget"), or its account's last such run did ("account").
   */
  observeInlineMoved(runLabel: string, reason: "budget" | "account"): void;
  observeSweep(kind: SweepKind, outcome: "ok" | "error", items: number): void;
  /** what became of a claimed Idempotency-Key: its answer kept, not kept (too large, or the account's bound reached), released, or replayed */
  observeIdempotency(outcome: string): void;
  /** a webhook delivery attempt ended: succeeded, failed with a retry scheduled, or failed for good */
  observeWebhookAttempt(outcome: WebhookAttemptOutcome, seconds: number): void;
  /** an endpoint was disabled after failing for WEBHOOK_DISABLE_AFTER_MS */
  observeWebhookDisabled(): void;
  /** `open()` is read at each scrape: the event streams open on this process */
  watchEventStreams(open: () => number): void;
  /** one read of the events feed for the live streams */
  observeEventFeedRead(reader: EventFeedReader): void;
  /** an event stream refused because a limit was reached */
  observeEventStreamRefused(limit: EventStreamLimit): void;
  /** at a fan-out turn: how long the oldest committed event not yet fanned out has waited (0: none) */
  observeEventsLag(seconds: number): void;
  /** documents of a job chunk this process committed (or skipped, or failed), by job kind and status */
  observeJobDocuments(kind: string, status: string, count: number): void;
  /** `running()` is read at each scrape: the job chunks this process works on */
  watchJobChunks(running: () => number): void;
  /** the same store, with every operation and failure counted */
  instrumentStore(store: ContentStore): ContentStore;
}

export interface MetricsSources {
  workerPool: WorkerPool;
  workerPoolSize: number;
  database: Database;
}

/** The metrics of a process, or undefined when METRICS_TOKEN is unset (nothing is measured then). */
export function metricsFor(
  config: Pick<Config, "metricsToken" | "utilityWorkers">,
  workerPool: WorkerPool,
  database: Database,
): Metrics | undefined {
  return config.metricsToken ? createMetrics({ workerPool, workerPoolSize: config.utilityWorkers, database }) : undefined;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** How often the event loop is sampled: a timer due this often, observed by how late it runs. */
const EVENT_LOOP_SAMPLE_MS = 10;
let eventLoopDelay: Histogram | undefined;

/**
 * The main thread's event-loop delay: how late a timer due every EVENT_LOOP_SAMPLE_MS runs, so a
 * request that holds the thread for a second shows as a sample of about a second. It is the process's,
 * not an app's, so one sampler (unreferenced: it never keeps the process alive) serves every registry.
 */
function eventLoopDelayHistogram(): Histogram {
  if (eventLoopDelay) return eventLoopDelay;
  const histogram = new Histogram({
    name: "kiln_event_loop_delay_seconds",
    help: `How late a timer due every ${EVENT_LOOP_SAMPLE_MS} ms ran on the main thread: the time the event loop was held`,
    buckets: LATENCY_BUCKETS,
    registers: [],
  });
  const sample = (due: number) => {
    setTimeout(() => {
      const now = performance.now();
      histogram.observe(Math.max(0, now - due) / 1000);
      sample(now + EVENT_LOOP_SAMPLE_MS);
    }, EVENT_LOOP_SAMPLE_MS).unref();
  };
  sample(performance.now() + EVENT_LOOP_SAMPLE_MS);
  eventLoopDelay = histogram;
  return histogram;
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  registry.registerMetric(eventLoopDelayHistogram());
  const requests = new Histogram({
    name: "kiln_http_request_duration_seconds",
    help: "HTTP requests by method, route template and status, with their latency",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const utilityRuns = new Histogram({
    name: "kiln_utility_run_duration_seconds",
    help: "Utility runs by utility id and outcome (ok or the error code), with their duration",
    labelNames: ["utility", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  new Gauge({
    name: "kiln_worker_pool_size",
    help: "Utility worker threads",
    registers,
    collect() {
      this.set(sources.workerPoolSize);
    },
  });
  new Gauge({
    name: "kiln_worker_pool_busy",
    help: "Utility workers running a job",
    registers,
    collect() {
      this.set(sources.workerPool.busy);
    },
  });
  new Gauge({
    name: "kiln_worker_pool_queued",
    help: "Utility runs waiting for a worker",
    registers,
    collect() {
      this.set(sources.workerPool.queued);
    },
  });
  new Gauge({
    name: "kiln_worker_pool_accounts_waiting",
    help: "Accounts with at least one utility run waiting for a worker",
    registers,
    collect() {
      this.set(sources.workerPool.accountsWaiting);
    },
  });
  new Gauge({
    name: "kiln_worker_pool_refusals",
    help: "Utility runs refused since start: past the account's queue (429, UTILITY_QUEUE_PER_ACCOUNT) or the pool's (503, UTILITY_QUEUE_LIMIT)",
    labelNames: ["limit"] as const,
    registers,
    collect() {
      this.set({ limit: "account_queue" }, sources.workerPool.refusals.account);
      this.set({ limit: "pool_queue" }, sources.workerPool.refusals.pool);
    },
  });
  new Gauge({
    name: "kiln_worker_pool_replacements",
    help: "Workers replaced after a timeout, a cancellation or a crash since start",
    registers,
    collect() {
      this.set(sources.workerPool.replacements);
    },
  });
  new Gauge({
    name: "kiln_database_pool_max_connections",
    help: "Connections the database pool may open",
    registers,
    collect() {
      this.set(sources.database.sql.options.max);
    },
  });
  new Gauge({
    name: "kiln_database_pool_stalled_seconds",
    help: "How long queries have waited for a database pool connection with none coming free (0: none waiting)",
    registers,
    collect() {
      this.set(sources.database.stalledForMs() / 1000);
    },
  });
  new Gauge({
    name: "kiln_database_up",
    help: "1 when the database answered a trivial query within a second at scrape time",
    registers,
    async collect() {
      this.set((await sources.database.ping()) ? 1 : 0);
    },
  });
  const idempotencyOutcomes = new Counter({
    name: "kiln_idempotency_answers_total",
    help: "Idempotency-Key answers kept, not kept (over IDEMPOTENCY_MAX_ANSWER_BYTES, or the account's kept answers at IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT), released and replayed",
    labelNames: ["outcome"] as const,
    registers,
  });
  new Gauge({
    name: "kiln_worker_pool_memory_stops",
    help: "Runs stopped because the process passed UTILITY_MEMORY_LIMIT_BYTES since start (each time the one that brought in the most memory)",
    registers,
    collect() {
      this.set(sources.workerPool.memoryStops);
    },
  });
  const inlineMoved = new Counter({
    name: "kiln_utility_inline_moved_total",
    help: "Runs small enough for the main thread that ran in a worker, by utility id (or pipeline): they passed UTILITY_INLINE_BUDGET_MS there (reason budget), or their account's last such run did within a second (reason account)",
    labelNames: ["utility", "reason"] as const,
    registers,
  });
  const webhookAttempts = new Histogram({
    name: "kiln_webhook_attempt_duration_seconds",
    help: "Webhook delivery attempts made by this node, by outcome (succeeded, retrying, failed: no retry left), with their duration",
    labelNames: ["outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const eventsLag = new Gauge({
    name: "kiln_events_feed_lag_seconds",
    help: "At this node's last webhook fan-out turn: how long the oldest committed event not yet fanned out to webhooks had waited (0: none)",
    registers,
  });
  const webhooksDisabled = new Counter({
    name: "kiln_webhooks_disabled_total",
    help: "Webhook endpoints this node disabled after they failed for WEBHOOK_DISABLE_AFTER_MS",
    registers,
  });
  const sweeps = new Counter({
    name: "kiln_sweeper_runs_total",
    help: "Background sweeps by kind and outcome",
    labelNames: ["kind", "outcome"] as const,
    registers,
  });
  const swept = new Counter({
    name: "kiln_sweeper_items_total",
    help: "Documents purged and orphaned files removed by the sweepers",
    labelNames: ["kind"] as const,
    registers,
  });
  const storeOperations = new Counter({
    name: "kiln_content_store_operations_total",
    help: "Content store operations (put, open, remove, list, probe)",
    labelNames: ["operation"] as const,
    registers,
  });
  const storeErrors = new Counter({
    name: "kiln_content_store_errors_total",
    help: "Content store operations that failed",
    labelNames: ["operation"] as const,
    registers,
  });

  let openEventStreams = () => 0;
  new Gauge({
    name: "kiln_event_streams_open",
    help: "Live event streams (GET /api/v1/events/stream) open on this process",
    registers,
    collect() {
      this.set(openEventStreams());
    },
  });
  const eventFeedReads = new Counter({
    name: "kiln_event_feed_reads_total",
    help: "Reads of the events feed by the live streams: shared (one per change of an account, for all its streams) or stream (one stream catching up)",
    labelNames: ["reader"] as const,
    registers,
  });
  const eventStreamsRefused = new Counter({
    name: "kiln_event_streams_refused_total",
    help: "Event streams refused because the key, the account or the process had its most open streams",
    labelNames: ["limit"] as const,
    registers,
  });

  const jobDocuments = new Counter({
    name: "kiln_job_documents_total",
    help: "Documents of jobs this process processed, by job kind (utility, schemaAudit, indexBuild) and status (succeeded, failed, skipped)",
    labelNames: ["kind", "status"] as const,
    registers,
  });
  let runningJobChunks = () => 0;
  new Gauge({
    name: "kiln_job_chunks_running",
    help: "Job chunks this process works on (JOBS_CHUNK_SIZE documents each at most)",
    registers,
    collect() {
      this.set(runningJobChunks());
    },
  });

  const counted = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    storeOperations.inc({ operation });
    try {
      return await work();
    } catch (error) {
      storeErrors.inc({ operation });
      throw error;
    }
  };

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      requests.observe({ method, route, status: String(status) }, seconds);
    },
    observeUtilityRun(utility, outcome, seconds) {
      utilityRuns.observe({ utility, outcome }, seconds);
    },
    observeInlineMoved(utility, reason) {
      inlineMoved.inc({ utility, reason });
    },
    observeIdempotency(outcome) {
      idempotencyOutcomes.inc({ outcome });
    },
    observeWebhookAttempt(outcome, seconds) {
      webhookAttempts.observe({ outcome }, seconds);
    },
    observeEventsLag(seconds) {
      eventsLag.set(seconds);
    },
    observeWebhookDisabled() {
      webhooksDisabled.inc();
    },
    watchEventStreams(open) {
      openEventStreams = open;
    },
    observeEventFeedRead(reader) {
      eventFeedReads.inc({ reader });
    },
    observeEventStreamRefused(limit) {
      eventStreamsRefused.inc({ limit });
    },
    observeSweep(kind, outcome, items) {
      sweeps.inc({ kind, outcome });
      if (items > 0) swept.inc({ kind }, items);
    },
    observeJobDocuments(kind, status, count) {
      jobDocuments.inc({ kind, status }, count);
    },
    watchJobChunks(running) {
      runningJobChunks = running;
    },
    instrumentStore(store) {
      return {
        put: (bytes) => counted("put", () => store.put(bytes)),
        open: (key) => counted("open", () => store.open(key)),
        remove: (key) => counted("remove", () => store.remove(key)),
        probe: () => counted("probe", () => store.probe()),
        async *list() {
          storeOperations.inc({ operation: "list" });
          try {
            yield* store.list();
          } catch (error) {
            storeErrors.inc({ operation: "list" });
            throw error;
          }
        },
      };
    },
  };
}
