/**
 * createApp(deps) composes the plugins and feature modules into the Elysia app, and the app into the
 * one fetch handler Kiln serves: `handle`, which adds what acts on the final Response (CORS, compression)
 * and on a committed write (the event notification). It never listens, so tests build it in-process and
 * call handle(new Request(...)).
 */
import { Elysia } from "elysia";
import type { Config } from "./config";
import { ERRORS } from "./core/error-codes";
import { httpError } from "./core/errors";
import { CompiledCache } from "./core/json-schema/check";
import type { Database } from "./db/client";
import { patchInPool } from "./engine/patch-in-pool";
import type { WorkerPool } from "./engine/pool";
import { type BodyLimit, bodyParser } from "./http/body";
import { requestLog } from "./http/context";
import { errorHandler, methodsAllowed } from "./http/errors";
import { idempotency as idempotencyHooks } from "./http/idempotency";
import { metricsPlugin } from "./http/metrics";
import { openapiDocs } from "./http/openapi";
import type { RateCounter } from "./http/rate-limit";
import { adminModule } from "./modules/admin";
import { Authenticator, authentication } from "./modules/auth";
import { DOCUMENT_RAW_ROUTES, documentsModule, IMPORT_ROUTE } from "./modules/documents";
import { documentLinksModule, linkBaseOf, linkSecretOf } from "./modules/documents/links";
import { documentsRepository } from "./modules/documents/repository";
import { documentsDeps } from "./modules/documents/service";
import { eventsModule } from "./modules/events";
import { createEventNotifier, mayHaveWritten, sendEventNotifications } from "./modules/events/notifier";
import { eventStreamsOf } from "./modules/events/stream";
import { healthModule } from "./modules/health";
import { jobsModule } from "./modules/jobs";
import { JobKinds } from "./modules/jobs/kinds";
import { jobRunner, type RunnerOptions } from "./modules/jobs/runner";
import { utilityJobKind } from "./modules/jobs/utility-kind";
import { PIPELINE_DEFINITION_MAX_BYTES, PIPELINE_DEFINITION_ROUTES, PIPELINE_RUN_ROUTES, pipelinesModule } from "./modules/pipelines";
import { pipelinesRepository } from "./modules/pipelines/repository";
import { indexesModule, queryModule } from "./modules/query";
import { indexBuildJobs, indexBuildKind } from "./modules/query/build";
import { matchingIds } from "./modules/query/execute";
import { IndexSets, indexerOf } from "./modules/query/indexes";
import { queryRepository } from "./modules/query/repository";
import { schemasModule } from "./modules/schemas";
import { schemaAuditKind } from "./modules/schemas/audit";
import { schemasRepository } from "./modules/schemas/repository";
import { type SchemaValidationDeps, schemaGuard } from "./modules/schemas/validation";
import { usageModule } from "./modules/usage";
import { EXECUTE_ROUTE, utilitiesModule, utilityRunVariants } from "./modules/utilities";
import { InlineCooldown } from "./modules/utilities/inline-cooldown";
import { webhooksModule } from "./modules/webhooks";
import type { Lookup } from "./modules/webhooks/address";
import { webhookOpenApi } from "./modules/webhooks/model";
import { webhooksRepository } from "./modules/webhooks/repository";
import { createLogger, type Logger } from "./observability/logger";
import { type Metrics, metricsFor } from "./observability/metrics";
import { withCorsAndCompression } from "./server/final-response";
import { addStateHeaders, requestState } from "./server/request-state";
import { createContentStore } from "./storage";
import type { ContentStore } from "./storage/content-store";
import { registry as defaultUtilityRegistry, type UtilityRegistry } from "./utilities/registry";

export interface AppDeps {
  config: Config;
  database: Database;
  logger?: Logger;
  now?: () => number;
  /** the utility worker pool, started at boot (src/index.ts) and stopped on shutdown */
  workerPool: WorkerPool;
  /** the utilities served; tests inject their own (the pool's registryModule must name the same set) */
  utilityRegistry?: UtilityRegistry;
  /** where document content lives; by default the configured store (src/index.ts shares it with the sweepers) */
  contentStore?: ContentStore;
  /** counts rate limits; by default in memory, per process (src/index.ts passes the Redis one with REDIS_URL) */
  rateCounter?: RateCounter;
  /** true once the process drains for shutdown: /ready then answers 503 */
  draining?: () => boolean;
  /** given by src/index.ts, which shares it with the sweepers; else made here when METRICS_TOKEN is set */
  metrics?: Metrics;
  /** how webhook URLs' names are resolved when they are checked (tests replace it) */
  webhookLookup?: Lookup;
}

/** Limit on request bodies outside utility execution (document create and content update). */
export const MAX_DOCUMENT_BODY_BYTES = 64 * 1024 * 1024;

export function createApp(deps: AppDeps) {
  const { config, database } = deps;
  const logger = deps.logger ?? createLogger(config.logLevel, undefined, config.logFormat);
  const metrics = deps.metrics ?? metricsFor(config, deps.workerPool, database);
  const contentStore = deps.contentStore ?? instrumented(createContentStore(config), metrics);
  const authenticator = new Authenticator(database.db, deps.now, deps.rateCounter);
  const auth = authentication(authenticator);
  const documentBodyLimit: BodyLimit = {
    bytes: MAX_DOCUMENT_BODY_BYTES,
    tooLarge: (limit) => httpError(ERRORS.document_too_large, `The request body exceeds ${limit} bytes`),
  };
  const utilityBodyLimit: BodyLimit = {
    bytes: config.utilityMaxPayloadBytes,
    tooLarge: (limit) => httpError(ERRORS.payload_too_large, `The utility payload exceeds ${limit} bytes`),
  };
  const pipelineBodyLimit: BodyLimit = {
    bytes: PIPELINE_DEFINITION_MAX_BYTES,
    tooLarge: (limit) => httpError(ERRORS.pipeline_too_large, `A pipeline definition may hold at most ${limit} bytes`),
  };
  const bodyLimits = new Map<string, BodyLimit>([
    ...[EXECUTE_ROUTE, ...PIPELINE_RUN_ROUTES].map((route) => [route, utilityBodyLimit] as const),
    ...PIPELINE_DEFINITION_ROUTES.map((route) => [route, pipelineBodyLimit] as const),
  ]);
  const schemas: SchemaValidationDeps = {
    repository: schemasRepository(database.db),
    limits: config.schemas,
    now: deps.now ?? Date.now,
    cache: new CompiledCache(config.schemas.cacheBytes),
    pool: deps.workerPool,
    inlineBudgetMs: config.utilityInlineBudgetMs,
    workerMs: config.utilityTimeoutMs,
  };
  const queries = queryRepository(database.db, documentsRepository(database.db).folderIds);
  const indexSets = new IndexSets(queries.indexSet, deps.now);
  const queryDeps = { repository: queries, documents: documentsRepository(database.db), store: contentStore, sets: indexSets };
  const documents = documentsDeps({
    db: database.db,
    store: contentStore,
    now: deps.now,
    purgeAfterMs: config.purgeAfterMs,
    patchWorker: patchInPool(deps.workerPool),
    schemaGuard: schemaGuard(schemas),
    indexer: indexerOf(indexSets),
  });
  const idempotency = idempotencyHooks({
    db: database.db,
    presentDocuments: documents.repository.presentIds,
    now: deps.now,
    maxAnswerBytes: config.idempotencyMaxAnswerBytes,
    maxBytesPerAccount: config.idempotencyMaxBytesPerAccount,
    onOutcome: (outcome) => metrics?.observeIdempotency(outcome),
  });
  const utilityEngine = {
    db: database.db,
    pool: deps.workerPool,
    registry: deps.utilityRegistry ?? defaultUtilityRegistry,
    inlineMaxBytes: config.utilityInlineMaxBytes,
    inlineBudgetMs: config.utilityInlineBudgetMs,
    inlineCooldown: new InlineCooldown(),
    maxPayloadBytes: config.utilityMaxPayloadBytes,
    maxOutputBytes: config.utilityMaxOutputBytes,
    documents,
    logger,
    now: deps.now ?? Date.now,
    metrics,
  };

  // Job kinds register here; the runner (every node's background work, src/index.ts) runs them all.
  const jobKinds = new JobKinds()
    .register(
      utilityJobKind({
        documents,
        pool: deps.workerPool,
        registry: utilityEngine.registry,
        logger,
        reportOutputMaxBytes: config.jobs.reportOutputMaxBytes,
        maxPayloadBytes: config.utilityMaxPayloadBytes,
      }),
    )
    .register(schemaAuditKind(schemas, documents))
    .register(
      indexBuildKind({
        queries,
        sets: indexSets,
        documents,
        pool: deps.workerPool,
        inlineMaxBytes: config.utilityInlineMaxBytes,
        logger,
        now: utilityEngine.now,
      }),
    );
  const jobs = {
    database,
    documents: documents.repository,
    pipelines: pipelinesRepository(database.db),
    registry: utilityEngine.registry,
    config: config.jobs,
    now: utilityEngine.now,
    resolveQuery: (accountId: string, query: { folder?: string; filter?: unknown }, limit: number) =>
      matchingIds(queryDeps, accountId, query, limit),
  };

  const streams = eventStreamsOf(database, {
    heartbeatMs: config.eventsHeartbeatMs,
    limits: config.eventStreamLimits,
    logger,
    metrics,
  });
  metrics?.watchEventStreams(() => streams.stats().open);

  const docs = openapiDocs({ webhooks: webhookOpenApi(), variants: utilityRunVariants(utilityEngine.registry) });
  const app = new Elysia({ normalize: false, name: "kiln" })
    .use(
      errorHandler({
        logger,
        authorizeUnknownRoute: (request, path) => authenticator.authorize(request, path),
        methodsAllowed: (path): string[] => methodsAllowed(app.routes, path),
      }),
    )
    .use(
      bodyParser({
        limitFor: (route) => bodyLimits.get(route) ?? documentBodyLimit,
        rawRoutes: new Set([EXECUTE_ROUTE, ...PIPELINE_RUN_ROUTES, ...DOCUMENT_RAW_ROUTES]),
        streamedRoutes: new Set([IMPORT_ROUTE]),
        authorize: (request, path) => authenticator.authorize(request, path),
      }),
    )
    .use(docs.plugin)
    .use(metricsPlugin(metrics, config.metricsToken))
    .use(auth)
    .use(healthModule({ database, contentStore, draining: deps.draining, stalledHealthMs: config.databaseStalledHealthMs }))
    .use(adminModule({ db: database.db, authenticator }))
    .use(usageModule({ db: database.db, auth, idempotencyMaxBytesPerAccount: config.idempotencyMaxBytesPerAccount }))
    .use(eventsModule({ db: database.db, auth, streams }))
    .use(
      webhooksModule({
        repository: webhooksRepository(database.db),
        config: config.webhooks,
        now: deps.now ?? Date.now,
        lookup: deps.webhookLookup,
        auth,
      }),
    )
    .use(utilitiesModule({ engine: utilityEngine, auth, idempotency }))
    .use(
      pipelinesModule({ repository: pipelinesRepository(database.db), engine: utilityEngine, now: utilityEngine.now, auth, idempotency }),
    )
    .use(jobsModule({ ...jobs, auth, idempotency }))
    .use(queryModule({ ...queryDeps, auth }))
    .use(documentsModule({ ...documents, auth, idempotency, importLineMaxBytes: MAX_DOCUMENT_BODY_BYTES }))
    .use(schemasModule({ ...schemas, auth, documents, jobs }))
    .use(indexesModule({ repository: queries, now: utilityEngine.now, builds: indexBuildJobs(jobs), auth }))
    .use(documentLinksModule({ ...documents, linkSecret: linkSecretOf(database.db, documents.now), linkBase: linkBaseOf(config), auth }));
  docs.describe(app);

  // Once a write has committed, every node's streams and webhook deliveries of its account are woken.
  const notifier = createEventNotifier(sendEventNotifications(database.sql), (error) =>
    logger.log("warn", "event notification failed", { error: error.message }),
  );
  const logRequest = requestLog(logger);
  const handleAndNotify = async (request: Request) => {
    const state = requestState(request);
    const response = await app.handle(request);
    // Set here, not in Elysia's `set.headers`: with those empty, a Response a route built (a page, a download)
    // goes out as it is, where Elysia would copy it into a new one, its body re-read as a stream, to add them.
    addStateHeaders(state, response);
    logRequest?.(request, response);
    if (state.accountId !== undefined && !state.madeNoEvents && mayHaveWritten(request.method, response.status)) {
      notifier.notify(state.accountId);
    }
    return response;
  };
  // every caller, in process (tests) or the listener, serves through `handle`, never through app.handle
  return {
    app,
    handle: withCorsAndCompression(handleAndNotify, config.corsOrigins),
    jobs: {
      kinds: jobKinds,
      /** the job runner over this app's kinds, as background work (src/index.ts lists it; tests start it) */
      runner: (options: Partial<RunnerOptions> = {}) =>
        jobRunner({ database, kinds: jobKinds, config: config.jobs, logger, metrics, ...options }),
    },
  };
}

function instrumented(store: ContentStore, metrics: Metrics | undefined): ContentStore {
  return metrics ? metrics.instrumentStore(store) : store;
}

/** What createApp makes: the Elysia app, and the handler that serves it. */
export type KilnApp = ReturnType<typeof createApp>;
/** The Elysia app, its routes typed, for Eden clients. */
export type App = KilnApp["app"];
/** For Eden clients: a run's body with `config` typed for one utility (the route's own body is any utility's). */
export type { UtilityRunBody } from "./modules/utilities/model";
export type { UtilityConfig, UtilityId } from "./utilities/registry";
