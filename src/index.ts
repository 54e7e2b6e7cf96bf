/**
 * Process entry: config → content store check → database (+ migrations) → bootstrap key → utility
 * workers → background work → listen. SIGTERM/SIGINT drain (process/drain.ts): /ready answers 503 at
 * once, in-flight requests finish, then what was started stops in reverse and the process exits 0. A
 * start-up that fails prints one line naming the cause and the setting, stops what it had started (the
 * embedded PostgreSQL above all) and exits 1 (process/start-up.ts).
 */

import { createApp } from "./app";
import { type Config, ConfigError, loadConfig } from "./config";
import { type BackgroundWork, startInOrder } from "./core/background";
import { createDatabase, type Database } from "./db/client";
import { createWorkerPool } from "./engine/pool";
import { idempotencySweep } from "./http/idempotency-sweep";
import { rateCounterFor } from "./http/rate-limit";
import { bootstrap } from "./modules/admin/service";
import { documentsRepository } from "./modules/documents/repository";
import { documentSweeps } from "./modules/documents/sweeper";
import { eventRetention } from "./modules/events/retention";
import { eventStreamsOf } from "./modules/events/stream";
import { jobRetention } from "./modules/jobs/retention";
import { webhookDelivery } from "./modules/webhooks/deliver";
import { createLogger, type Logger } from "./observability/logger";
import { type Metrics, metricsFor } from "./observability/metrics";
import { allocatorSetting } from "./process/allocator";
import { drain } from "./process/drain";
import { failed, redacted, StartUp } from "./process/start-up";
import { listen, listenFailure } from "./server/listener";
import { createContentStore } from "./storage";
import { type ContentStore, ContentStoreUnavailable } from "./storage/content-store";
import { registry } from "./utilities/registry";

/** After DRAIN_TIMEOUT_MS, the most closing the database may take before the process exits anyway. */
const CLOSE_DATABASE_MS = 5_000;

/**
 * The node's background work, started in this order once it can serve and stopped in reverse when it
 * drains. Each one says how it stays cluster-once (core/background.ts).
 */
function backgroundWork(deps: {
  config: Config;
  jobRunner: BackgroundWork;
  database: Database;
  logger: Logger;
  metrics: Metrics | undefined;
  contentStore: ContentStore;
}): BackgroundWork[] {
  const { config, database, logger, metrics } = deps;
  const intervalMs = config.sweepIntervalMs;
  const documents = documentsRepository(database.db);
  return [
    documentSweeps({
      repository: documents,
      database,
      store: deps.contentStore,
      now: Date.now,
      logger,
      intervalMs,
      metrics,
    }),
    eventRetention({ database, retentionMs: config.eventRetentionMs, intervalMs, logger }),
    idempotencySweep({ database, intervalMs, logger }),
    webhookDelivery({ database, config: config.webhooks, logger, metrics }),
    jobRetention({ database, retentionMs: config.jobs.retentionMs, intervalMs, logger }),
    deps.jobRunner,
  ];
}

async function main(): Promise<void> {
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
  const start = new StartUp();
  const store = createContentStore(config);
  await start.step(
    () => store.probe(),
    (error) =>
      error instanceof ContentStoreUnavailable
        ? `the content store cannot be used: ${error.setting ? `check ${error.setting}: ` : ""}${error.message}`
        : failed("the content store check")(error),
  );
  const database = await start.step(
    () => createDatabase(config, (message) => logger.log("info", message)),
    (error) => {
      const reason = (error as { code?: string })?.code ?? (error as Error)?.message ?? String(error);
      const where = config.databaseUrl
        ? `the database at DATABASE_URL (${redacted(config.databaseUrl)})`
        : `the embedded database in DATA_DIR (${config.dataDir})`;
      return `cannot use ${where}: ${reason}${(error as Error)?.message && (error as Error).message !== reason ? ` (${(error as Error).message})` : ""}`;
    },
  );
  start.stopOnFailure(() => database.close());
  const generatedKey = await start.step(() => bootstrap(database.db, config.bootstrapApiKey), failed("creating the first API key"));
  if (generatedKey) {
    // Printed once, on the first start of an empty database: it is stored only as a hash.
    console.log(`\n  Kiln generated an API key with every permission (shown only now):\n\n    ${generatedKey}\n`);
  }
  const workerPool = await start.step(
    () => createWorkerPool(config, registry.module, (reason) => logger.log("warn", "utility worker lost", { reason })).start(),
    failed("starting the utility workers"),
  );
  start.stopOnFailure(() => workerPool.stop());
  const metrics = metricsFor(config, workerPool, database);
  const contentStore = metrics?.instrumentStore(store) ?? store;
  const rateCounter = rateCounterFor({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger });
  start.stopOnFailure(() => rateCounter.close());
  let draining = false;
  const app = createApp({ config, database, logger, workerPool, contentStore, metrics, rateCounter, draining: () => draining });
  const background = await start.step(
    () => startInOrder(backgroundWork({ config, database, logger, metrics, contentStore, jobRunner: app.jobs.runner() })),
    failed("starting the background work"),
  );
  start.stopOnFailure(() => background.stop());
  const listenOn = { kind: config.httpListener, port: config.port, hostname: config.host };
  const server = await start.step(
    () => listen(listenOn, (request) => app.handle(request)),
    (error) => listenFailure(error, listenOn),
  );
  logger.log("info", "listening", {
    url: server.url.href,
    listener: config.httpListener,
    startupMs: Math.round(performance.now() - startedAt),
    database: config.databaseUrl ? "external" : "embedded",
    contentStore: config.contentStore.kind,
    allocator: allocatorSetting(),
  });

  const shutdown = async (signal: string) => {
    if (draining) return;
    draining = true;
    setTimeout(
      () => {
        logger.log("error", "drain stuck: exiting without closing the database", { signal });
        process.exit(1);
      },
      config.drainTimeoutMs + 2 * CLOSE_DATABASE_MS,
    ).unref();
    await drain(
      signal,
      { logger, server, background, endStreams: () => eventStreamsOf(database).close(), workerPool, rateCounter, database },
      { delayMs: config.drainDelayMs, timeoutMs: config.drainTimeoutMs, closeDatabaseMs: CLOSE_DATABASE_MS },
    );
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

await main();
