/**
 * Process entry: config → database (+ migrations) → bootstrap key → listen. SIGTERM/SIGINT drain: /ready
 * answers 503 at once, in-flight requests finish, then the database closes (stopping the embedded
 * PostgreSQL) and the process exits 0. A start-up that fails prints one line naming the cause and the
 * setting, stops what it had started (the embedded PostgreSQL above all) and exits 1.
 */
import { ConfigError, loadConfig, type Config } from "./config";
import { createDatabase } from "./db/client";
import { createLogger } from "./observability/logger";
import { metricsFor } from "./observability/metrics";
import { bootstrap } from "./modules/admin/service";
import { createApp } from "./app";
import { registry } from "./utilities/registry";
import { createWorkerPool } from "./engine/pool";
import { createContentStore } from "./storage";
import { ContentStoreUnavailable } from "./storage/content-store";
import { documentsRepository } from "./modules/documents/repository";
import { startSweepers } from "./modules/documents/sweeper";
import { rateCounterFor } from "./http/rate-limit";
import { purgeExpiredIdempotencyKeys } from "./http/idempotency";
import { listen, listenFailure } from "./server/listener";
import { LOCKS, withTryAdvisoryLock } from "./db/locks";
import { sweepExpiredEvents } from "./modules/events/service";
import { eventStreamsOf } from "./modules/events/stream";
import { startWebhookDeliverer } from "./modules/webhooks/deliver";

/** What start-up has started so far, stopped in reverse order if a later step fails. */
const started: (() => unknown)[] = [];

/** Ends a failed start: what was started is stopped, then one line (no stack trace) and exit 1. */
async function failStart(line: string): Promise<never> {
  for (const stop of started.reverse()) {
    try {
      await stop();
    } catch {
      // the start already failed: its cause is the line worth printing
    }
  }
  console.error(`kiln: ${line}`);
  process.exit(1);
}

/** Runs a start-up step; its failure ends the start with the line `explain` gives. */
async function step<T>(run: () => T | Promise<T>, explain: (error: unknown) => string | Promise<string>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    return failStart(await explain(error));
  }
}

const failed = (what: string) => (error: unknown) => `${what} failed: ${(error as Error)?.message ?? String(error)}`;

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`kiln: invalid configuration: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
const logger = createLogger(config.logLevel, undefined, config.logFormat);
const startedAt = performance.now();
const store = createContentStore(config);
await step(
  () => store.probe(),
  (error) =>
    error instanceof ContentStoreUnavailable
      ? `the content store cannot be used: ${error.setting ? `check ${error.setting}: ` : ""}${error.message}`
      : failed("the content store check")(error),
);
/** The URL without its password, for messages. */
const redacted = (url: string) => url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
let database: Awaited<ReturnType<typeof createDatabase>>;
try {
  database = await createDatabase(config, (message) => logger.log("info", message));
} catch (error) {
  const reason = (error as { code?: string })?.code ?? (error as Error)?.message ?? String(error);
  const where = config.databaseUrl
    ? `the database at DATABASE_URL (${redacted(config.databaseUrl)})`
    : `the embedded database in DATA_DIR (${config.dataDir})`;
  console.error(
    `kiln: cannot use ${where}: ${reason}${(error as Error)?.message && (error as Error).message !== reason ? ` (${(error as Error).message})` : ""}`,
  );
  process.exit(1);
}
started.push(() => database.close());
const generatedKey = await step(() => bootstrap(database.db, config.bootstrapApiKey), failed("creating the first API key"));
if (generatedKey) {
  // Printed once, on the first start of an empty database: it is stored only as a hash.
  console.log(`\n  Kiln generated an API key with every permission (shown only now):\n\n    ${generatedKey}\n`);
}
const workerPool = await step(
  () => createWorkerPool(config, registry.module, (reason) => logger.log("warn", "utility worker lost", { reason })).start(),
  failed("starting the utility workers"),
);
started.push(() => workerPool.stop());
const metrics = metricsFor(config, workerPool, database);
const contentStore = metrics?.instrumentStore(store) ?? store;
const rateCounter = rateCounterFor({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger });
started.push(() => rateCounter.close());
let draining = false;
const app = createApp({ config, database, logger, workerPool, contentStore, metrics, rateCounter, draining: () => draining });
const sweepers = startSweepers({
  repository: documentsRepository(database.db),
  database,
  store: contentStore,
  now: Date.now,
  logger,
  intervalMs: config.sweepIntervalMs,
  metrics,
});
started.push(() => sweepers.stop());
const eventSweep = setInterval(() => {
  withTryAdvisoryLock(database.sql, LOCKS.eventSweep, () => sweepExpiredEvents(database.db, Date.now() - config.eventRetentionMs)).catch(
    (error) => logger.log("error", "event sweep failed", { error: (error as Error).message }),
  );
}, config.sweepIntervalMs);
const idempotencySweep = setInterval(() => {
  purgeExpiredIdempotencyKeys(database.db, Date.now()).catch((error) =>
    logger.log("error", "idempotency key sweep failed", { error: (error as Error).message }),
  );
}, config.sweepIntervalMs);
started.push(
  () => clearInterval(eventSweep),
  () => clearInterval(idempotencySweep),
);
const webhookDeliverer = startWebhookDeliverer({ database, config: config.webhooks, logger, metrics });
started.push(() => webhookDeliverer.stop());
const listenOn = { kind: config.httpListener, port: config.port, hostname: config.host };
const server = await step(
  () => listen(listenOn, (request) => app.handle(request)),
  (error) => listenFailure(error, listenOn),
);
logger.log("info", "listening", {
  url: server.url.href,
  listener: config.httpListener,
  startupMs: Math.round(performance.now() - startedAt),
  database: config.databaseUrl ? "external" : "embedded",
  contentStore: config.contentStore.kind,
});

/** After DRAIN_TIMEOUT_MS, the most closing the database may take before the process exits anyway. */
const CLOSE_DATABASE_MS = 5_000;

/**
 * Drain: /ready answers 503 from now on, so a load balancer takes the node out of rotation. The node
 * goes on serving for DRAIN_DELAY_MS (for balancers that poll /ready) and while requests are in flight,
 * then stops listening and waits for the last ones and its background work; DRAIN_TIMEOUT_MS bounds all
 * of it, whatever is stuck, and closing the database gets CLOSE_DATABASE_MS more.
 */
async function shutdown(signal: string) {
  if (draining) return;
  draining = true;
  logger.log("info", "draining", { signal, inFlight: server.pendingRequests });
  setTimeout(
    () => {
      logger.log("error", "drain stuck: exiting without closing the database", { signal });
      process.exit(1);
    },
    config.drainTimeoutMs + 2 * CLOSE_DATABASE_MS,
  ).unref();
  // no new webhook attempt from now on; those under way end within WEBHOOK_TIMEOUT_MS
  const deliveriesStopped = webhookDeliverer.stop();
  const deadline = Date.now() + config.drainTimeoutMs;
  await Bun.sleep(Math.min(config.drainDelayMs, config.drainTimeoutMs));
  // live event streams never finish by themselves: end them now (their clients resume on another node with Last-Event-ID)
  await Promise.race([eventStreamsOf(database).close(), Bun.sleep(Math.max(0, deadline - Date.now()))]);
  while (server.pendingRequests > 0 && Date.now() < deadline) await Bun.sleep(20);
  const stopped = await Promise.race([server.stop().then(() => true), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => false)]);
  if (!stopped) {
    logger.log("warn", "drain timed out: closing the requests still in flight", { inFlight: server.pendingRequests });
    await server.stop(true);
  }
  clearInterval(idempotencySweep);
  clearInterval(eventSweep);
  const background = Promise.all([sweepers.stop(), deliveriesStopped, workerPool.stop()]).then(() => true);
  if (!(await Promise.race([background, Bun.sleep(Math.max(0, deadline - Date.now())).then(() => false)])))
    logger.log("warn", "drain timed out: background work (sweeps, webhook attempts, workers) left unfinished", { signal });
  rateCounter.close();
  // sql.end gives running queries CLOSE_DATABASE_MS, then closes their connections
  await database.close(CLOSE_DATABASE_MS);
  logger.log("info", "stopped", { signal });
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
