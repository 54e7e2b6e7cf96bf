/**
 * Environment → one typed, frozen config object. Invalid values stop the process at start-up
 * with a message naming the variable (docs/configuration.md).
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";

/** Where document content lives: `$DATA_DIR/content`, or an S3-compatible bucket. */
export type ContentStoreConfig = { readonly kind: "disk" } | { readonly kind: "s3"; readonly s3: S3Settings };

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "json" | "pretty";
/** What listens for HTTP: Bun.serve, or Bun's node:http server (holds `100 Continue` back; src/server/listener.ts). */
export type HttpListener = "bun" | "node";

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly bootstrapApiKey: string | undefined;
  readonly utilityTimeoutMs: number;
  readonly utilityInlineMaxBytes: number;
  /** UTILITY_INLINE_BUDGET_MS: how long one inline run may hold the event loop before it moves to a worker */
  readonly utilityInlineBudgetMs: number;
  readonly utilityMaxPayloadBytes: number;
  readonly utilityMaxOutputBytes: number;
  readonly utilityMemoryLimitBytes: number;
  readonly idempotencyMaxAnswerBytes: number;
  /** kept Idempotency-Key answers an account may hold at once; past it answers are returned but not kept */
  readonly idempotencyMaxBytesPerAccount: number;
  readonly utilityWorkers: number;
  readonly utilityQueueLimit: number;
  /** UTILITY_QUEUE_PER_ACCOUNT: runs of one account that may wait for a worker (429 `account_busy` beyond) */
  readonly utilityQueuePerAccount: number;
  /** UTILITY_WORKERS_PER_ACCOUNT: workers one account's runs may hold at once; the rest stay free for the other accounts */
  readonly utilityWorkersPerAccount: number;
  readonly purgeAfterMs: number;
  /** how long events stay readable (GET /api/v1/events) before the sweep removes them */
  readonly eventRetentionMs: number;
  /** an open event stream (GET /api/v1/events/stream) sends a heartbeat comment after this long without a write */
  readonly eventsHeartbeatMs: number;
  /** open event streams allowed per API key, per account and per process, counted by each process */
  readonly eventStreamLimits: EventStreamLimits;
  readonly sweepIntervalMs: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /** bearer token of GET /metrics; unset: no metrics */
  readonly metricsToken: string | undefined;
  readonly contentStore: ContentStoreConfig;
  /** connections per process to PostgreSQL (several nodes share the server's max_connections) */
  readonly databasePoolMax: number;
  readonly databaseConnectTimeoutMs: number;
  /** lock, statement, idle-in-transaction and pool-acquire bounds of every pool connection (src/db/client.ts) */
  readonly databaseLimits: ConnectionLimits;
  /** /health answers 503 once queries have waited this long for a pool connection with none coming free */
  readonly databaseStalledHealthMs: number;
  /** shared rate-limit counters (redis://, rediss://, valkey://); undefined: each process counts alone */
  readonly redisUrl: string | undefined;
  /** prefix of every Redis key Kiln writes, so several deployments can share one Redis */
  readonly redisPrefix: string;
  /** base URL of signed download links; undefined: the server's configured address (never the request's Host) */
  readonly publicUrl: string | undefined;
  /** after SIGTERM, how long a node keeps taking new requests while /ready answers 503 */
  readonly drainDelayMs: number;
  /** after SIGTERM, the longest a node waits for in-flight requests before closing them */
  readonly drainTimeoutMs: number;
  /** origins whose browsers may call the API (CORS); empty: none */
  readonly corsOrigins: CorsOrigins;
  /** `bun` (Bun.serve, fastest) or `node` (sends `100 Continue` only once the request is accepted, costs CPU) */
  readonly httpListener: HttpListener;
  /** webhook deliveries (src/modules/webhooks, docs/events.md) */
  readonly webhooks: WebhookConfig;
  /** folders' JSON Schemas: SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH, SCHEMA_INLINE_MAX_BYTES, SCHEMA_CACHE_BYTES (docs/schemas.md) */
  readonly schemas: Readonly<Record<"maxBytes" | "maxDepth" | "inlineMaxBytes" | "cacheBytes", number>>;
  /** background jobs (src/modules/jobs, docs/jobs.md) */
  readonly jobs: JobsConfig;
}

export interface JobsConfig {
  /** JOBS_MAX_DOCUMENTS: documents one job may cover */
  readonly maxDocuments: number;
  /** JOBS_RETENTION_MS: how long a finished job and its results are kept */
  readonly retentionMs: number;
  /** JOBS_CHUNK_SIZE: documents one claim takes */
  readonly chunkSize: number;
  /** JOBS_LEASE_MS: how long a claim holds its chunk without a heartbeat before another node may take it */
  readonly leaseMs: number;
  /** JOBS_CONCURRENCY: chunks in work at once on one node */
  readonly concurrency: number;
  /** JOBS_ACCOUNT_CONCURRENCY: chunks of one account in work at once on one node */
  readonly accountConcurrency: number;
  /** JOBS_REPORT_OUTPUT_MAX_BYTES: a report's output kept per document */
  readonly reportOutputMaxBytes: number;
}

export interface EventStreamLimits {
  /** EVENT_STREAMS_PER_KEY */
  readonly perKey: number;
  /** EVENT_STREAMS_PER_ACCOUNT */
  readonly perAccount: number;
  /** EVENT_STREAMS_PER_PROCESS */
  readonly perProcess: number;
}

export const EVENT_STREAM_LIMITS_DEFAULT: EventStreamLimits = Object.freeze({ perKey: 20, perAccount: 100, perProcess: 10_000 });

export interface WebhookConfig {
  /** WEBHOOK_TIMEOUT_MS: an attempt's whole time (connect, send, the answer's status and up to 4 KiB of its body) */
  readonly timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE_MS: the delay before each attempt (the first one's included), counted from the previous failure */
  readonly retryScheduleMs: readonly number[];
  /** WEBHOOK_DISABLE_AFTER_MS: an endpoint failing without a success for this long is disabled */
  readonly disableAfterMs: number;
  /** WEBHOOK_SECRET_OVERLAP_MS: after a rotation, how long the previous secret signs too */
  readonly secretOverlapMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: http:// and private, loopback and link-local addresses allowed (development, tests) */
  readonly allowPrivateNetworks: boolean;
  /** WEBHOOK_CONCURRENCY: attempts in flight at once on one node */
  readonly concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: attempts in flight at once to one endpoint, over every node */
  readonly endpointConcurrency: number;
  /** WEBHOOK_ACCOUNT_CONCURRENCY: attempts in flight at once for one account on one node */
  readonly accountConcurrency: number;
  /** WEBHOOK_FANOUT_ACCOUNTS: accounts whose new events one fan-out turn takes, the longest waiting first */
  readonly fanoutAccounts: number;
  /** WEBHOOK_FANOUT_DELIVERIES: deliveries one fan-out turn makes for one account (at least one event's) */
  readonly fanoutDeliveries: number;
  /** EVENTS_LAG_WARN_MS: a warning in the log while an event waits longer than this to be fanned out */
  readonly lagWarnMs: number;
}

/** Svix's schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const WEBHOOK_RETRY_SCHEDULE_DEFAULT = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

function retrySchedule(env: Env): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE_MS;
  if (raw === undefined || raw.trim() === "") return [...WEBHOOK_RETRY_SCHEDULE_DEFAULT];
  const parts = raw.split(",").map((part) => part.trim());
  if (parts.length > 50 || parts.some((part) => !/^\d{1,10}$/.test(part)) || Number(parts[0]) !== 0) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE_MS must be 1 to 50 comma-separated delays in milliseconds, one per attempt, the first 0 (the first attempt is made at once), got '${raw}'`,
    );
  }
  return parts.map(Number);
}

function booleanOf(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/**
 * The bounds on every pool connection (0: none), each ending a request in 503: `lockTimeoutMs` on waiting
 * for a lock, `statementTimeoutMs` on one statement and `acquireTimeoutMs` on a query's wait for a free
 * connection (postgres.js patched: acquire_timeout, src/db/client.ts) in `database_busy`;
 * `idleInTransactionTimeoutMs` on a transaction's idle time between statements (the server closes the
 * connection: `database_unavailable`).
 */
export interface ConnectionLimits {
  lockTimeoutMs: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  acquireTimeoutMs: number;
}

export const CONNECTION_LIMITS_DEFAULT: ConnectionLimits = {
  lockTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 10_000,
  acquireTimeoutMs: 10_000,
};

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got '${raw}'`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** The S3_* variable, else its AWS_* equivalent (the names Bun's S3Client reads). */
const firstSet = (env: Env, name: string, fallback: string) => env[name] || env[fallback] || undefined;

function contentStoreConfig(env: Env): ContentStoreConfig {
  const kind = env.CONTENT_STORE || "disk";
  if (kind === "disk") return { kind };
  if (kind !== "s3") throw new ConfigError(`CONTENT_STORE must be disk or s3, got '${env.CONTENT_STORE}'`);
  const bucket = firstSet(env, "S3_BUCKET", "AWS_BUCKET");
  if (!bucket) throw new ConfigError("S3_BUCKET (or AWS_BUCKET) is required with CONTENT_STORE=s3");
  const endpoint = firstSet(env, "S3_ENDPOINT", "AWS_ENDPOINT");
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new ConfigError(`S3_ENDPOINT must be a URL such as https://s3.eu-west-1.amazonaws.com, got '${endpoint}'`);
  if (endpoint !== undefined && !/^https?:$/.test(new URL(endpoint).protocol))
    throw new ConfigError(`S3_ENDPOINT must be an http:// or https:// URL, got '${endpoint}'`);
  const accessKeyId = firstSet(env, "S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID");
  const secretAccessKey = firstSet(env, "S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY");
  if (!accessKeyId) throw new ConfigError("S3_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID) is required with CONTENT_STORE=s3");
  if (!secretAccessKey) throw new ConfigError("S3_SECRET_ACCESS_KEY (or AWS_SECRET_ACCESS_KEY) is required with CONTENT_STORE=s3");
  const prefix = env.S3_PREFIX ?? "kiln/";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the prefix must not hold
  if (prefix.startsWith("/") || prefix.length > 512 || /[\x00-\x1f\x7f]/.test(prefix)) {
    throw new ConfigError(
      `S3_PREFIX must be a key prefix without a leading '/' or control characters (at most 512 characters), got '${prefix}'`,
    );
  }
  return {
    kind,
    s3: {
      bucket,
      endpoint,
      region: firstSet(env, "S3_REGION", "AWS_REGION"),
      accessKeyId,
      secretAccessKey,
      sessionToken: firstSet(env, "S3_SESSION_TOKEN", "AWS_SESSION_TOKEN"),
      prefix,
      timeoutMs: integer(env, "S3_TIMEOUT_MS", S3_TIMEOUT_MS_DEFAULT, 100, 600_000),
    },
  };
}

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];
const LOG_FORMATS: readonly LogFormat[] = ["json", "pretty"];
const HTTP_LISTENERS: readonly HttpListener[] = ["bun", "node"];

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL");
  }
  const bootstrapApiKey = env.BOOTSTRAP_API_KEY || undefined;
  if (bootstrapApiKey !== undefined && bootstrapApiKey.length < 16) {
    throw new ConfigError("BOOTSTRAP_API_KEY must be at least 16 characters long");
  }
  const logLevel = (env.LOG_LEVEL || "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got '${env.LOG_LEVEL}'`);
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl !== undefined && !/^(redis|rediss|valkey|valkeys):\/\/[^\s]*$/.test(redisUrl)) {
    throw new ConfigError("REDIS_URL must be a redis://, rediss://, valkey:// or valkeys:// URL");
  }
  const publicUrl = env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, "") : undefined;
  if (publicUrl !== undefined && !(/^https?:\/\//.test(publicUrl) && URL.canParse(publicUrl))) {
    throw new ConfigError(`PUBLIC_URL must be an http:// or https:// URL, got '${env.PUBLIC_URL}'`);
  }
  const logFormat = (env.LOG_FORMAT || "json") as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) {
    throw new ConfigError(`LOG_FORMAT must be one of ${LOG_FORMATS.join(", ")}, got '${env.LOG_FORMAT}'`);
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError("METRICS_TOKEN must be at least 16 characters long, without spaces");
  }
  const httpListener = (env.HTTP_LISTENER || "bun") as HttpListener;
  if (!HTTP_LISTENERS.includes(httpListener)) {
    throw new ConfigError(`HTTP_LISTENER must be one of ${HTTP_LISTENERS.join(", ")}, got '${env.HTTP_LISTENER}'`);
  }
  const corsOrigins = parseCorsOrigins(env.CORS_ORIGINS);
  if (corsOrigins === undefined) {
    throw new ConfigError(
      `CORS_ORIGINS must be * or a comma-separated list of origins such as https://app.example.com (scheme, host and port only), got '${env.CORS_ORIGINS}'`,
    );
  }
  const utilityWorkers = integer(env, "UTILITY_WORKERS", Math.max(1, availableParallelism()), 1, 256);
  return Object.freeze({
    port: integer(env, "PORT", 3000, 0, 65535),
    host: env.HOST || "0.0.0.0",
    dataDir: resolve(env.DATA_DIR || "./data"),
    databaseUrl,
    bootstrapApiKey,
    utilityTimeoutMs: integer(env, "UTILITY_TIMEOUT_MS", 30_000, 1),
    utilityInlineMaxBytes: integer(env, "UTILITY_INLINE_MAX_BYTES", 2048, 0),
    utilityInlineBudgetMs: integer(env, "UTILITY_INLINE_BUDGET_MS", 20, 1, 60_000),
    utilityMaxPayloadBytes: integer(env, "UTILITY_MAX_PAYLOAD_BYTES", 52_428_800, 1, 1 << 30),
    utilityMaxOutputBytes: integer(env, "UTILITY_MAX_OUTPUT_BYTES", 52_428_800, 1, 1 << 30),
    utilityMemoryLimitBytes: integer(env, "UTILITY_MEMORY_LIMIT_BYTES", 4 * 1024 ** 3, 64 * 1024 ** 2),
    idempotencyMaxAnswerBytes: integer(env, "IDEMPOTENCY_MAX_ANSWER_BYTES", 1024 * 1024, 0, 1 << 30),
    idempotencyMaxBytesPerAccount: integer(env, "IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT", 16 * 1024 * 1024, 0, 2 ** 40),
    utilityWorkers,
    utilityQueueLimit: integer(env, "UTILITY_QUEUE_LIMIT", 64, 0),
    utilityQueuePerAccount: integer(env, "UTILITY_QUEUE_PER_ACCOUNT", 4, 0),
    utilityWorkersPerAccount: integer(env, "UTILITY_WORKERS_PER_ACCOUNT", Math.ceil(utilityWorkers / 2), 1, utilityWorkers),
    purgeAfterMs: integer(env, "PURGE_AFTER_MS", 2_592_000_000, 0),
    eventRetentionMs: integer(env, "EVENT_RETENTION_MS", 2_592_000_000, 60_000),
    eventsHeartbeatMs: integer(env, "EVENTS_HEARTBEAT_MS", 15_000, 10, 3_600_000),
    eventStreamLimits: Object.freeze({
      perKey: integer(env, "EVENT_STREAMS_PER_KEY", EVENT_STREAM_LIMITS_DEFAULT.perKey, 1, 1_000_000),
      perAccount: integer(env, "EVENT_STREAMS_PER_ACCOUNT", EVENT_STREAM_LIMITS_DEFAULT.perAccount, 1, 1_000_000),
      perProcess: integer(env, "EVENT_STREAMS_PER_PROCESS", EVENT_STREAM_LIMITS_DEFAULT.perProcess, 1, 1_000_000),
    }),
    sweepIntervalMs: integer(env, "SWEEP_INTERVAL_MS", 60_000, 100),
    logLevel,
    logFormat,
    metricsToken,
    contentStore: contentStoreConfig(env),
    databasePoolMax: integer(env, "DATABASE_POOL_MAX", 20, 1, 1000),
    databaseConnectTimeoutMs: integer(env, "DATABASE_CONNECT_TIMEOUT_MS", 5_000, 1_000, 600_000),
    databaseLimits: Object.freeze({
      lockTimeoutMs: integer(env, "DATABASE_LOCK_TIMEOUT_MS", CONNECTION_LIMITS_DEFAULT.lockTimeoutMs, 0, 3_600_000),
      statementTimeoutMs: integer(env, "DATABASE_STATEMENT_TIMEOUT_MS", CONNECTION_LIMITS_DEFAULT.statementTimeoutMs, 0, 3_600_000),
      idleInTransactionTimeoutMs: integer(
        env,
        "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS",
        CONNECTION_LIMITS_DEFAULT.idleInTransactionTimeoutMs,
        0,
        3_600_000,
      ),
      acquireTimeoutMs: integer(env, "DATABASE_ACQUIRE_TIMEOUT_MS", CONNECTION_LIMITS_DEFAULT.acquireTimeoutMs, 100, 3_600_000),
    }),
    databaseStalledHealthMs: integer(env, "DATABASE_STALLED_HEALTH_MS", 60_000, 1_000, 3_600_000),
    redisUrl,
    redisPrefix: env.REDIS_PREFIX ?? "kiln:",
    publicUrl,
    drainDelayMs: integer(env, "DRAIN_DELAY_MS", 0, 0, 600_000),
    drainTimeoutMs: integer(env, "DRAIN_TIMEOUT_MS", 30_000, 0, 3_600_000),
    corsOrigins,
    httpListener,
    schemas: Object.freeze({
      maxBytes: integer(env, "SCHEMA_MAX_BYTES", 262_144, 64, 16 * 1024 * 1024),
      maxDepth: integer(env, "SCHEMA_MAX_DEPTH", 64, 2, 1_000),
      inlineMaxBytes: integer(env, "SCHEMA_INLINE_MAX_BYTES", 65_536, 0, 1 << 30),
      cacheBytes: integer(env, "SCHEMA_CACHE_BYTES", 32 * 1024 * 1024, 0, 2 ** 40),
    }),
    webhooks: Object.freeze({
      timeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 15_000, 100, 600_000),
      retryScheduleMs: Object.freeze(retrySchedule(env)),
      disableAfterMs: integer(env, "WEBHOOK_DISABLE_AFTER_MS", 432_000_000, 1),
      secretOverlapMs: integer(env, "WEBHOOK_SECRET_OVERLAP_MS", 86_400_000, 0),
      allowPrivateNetworks: booleanOf(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS"),
      concurrency: integer(env, "WEBHOOK_CONCURRENCY", 32, 1, 1000),
      endpointConcurrency: integer(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 4, 1, 100),
      accountConcurrency: integer(env, "WEBHOOK_ACCOUNT_CONCURRENCY", 8, 1, 1000),
      fanoutAccounts: integer(env, "WEBHOOK_FANOUT_ACCOUNTS", 50, 1, 10_000),
      fanoutDeliveries: integer(env, "WEBHOOK_FANOUT_DELIVERIES", 500, 1, 100_000),
      lagWarnMs: integer(env, "EVENTS_LAG_WARN_MS", 60_000, 1),
    }),
    jobs: Object.freeze({
      maxDocuments: integer(env, "JOBS_MAX_DOCUMENTS", 100_000, 1, 10_000_000),
      retentionMs: integer(env, "JOBS_RETENTION_MS", 604_800_000, 60_000),
      chunkSize: integer(env, "JOBS_CHUNK_SIZE", 50, 1, 1_000),
      leaseMs: integer(env, "JOBS_LEASE_MS", 30_000, 200, 3_600_000),
      concurrency: integer(env, "JOBS_CONCURRENCY", 4, 1, 100),
      accountConcurrency: integer(env, "JOBS_ACCOUNT_CONCURRENCY", 2, 1, 100),
      reportOutputMaxBytes: integer(env, "JOBS_REPORT_OUTPUT_MAX_BYTES", 65_536, 0, 16_777_216),
    }),
  });
}

/** The bucket that holds content when CONTENT_STORE=s3, and how to reach it. */
export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** key prefix inside the bucket, e.g. `kiln/` */
  prefix: string;
  /**
   * S3_TIMEOUT_MS: how long any call may wait for the bucket (a large download's copy to the spool
   * included). A bucket that accepts connections and never answers then costs a request this long,
   * not the whole outage: the call fails as unavailable (503), and a write that timed out is never
   * committed (its object, should it land later, is an orphan for the sweep).
   */
  timeoutMs?: number;
}

export const S3_TIMEOUT_MS_DEFAULT = 15_000;

/** The origins allowed to call the API from a browser: a list, or `*` for any. */
export type CorsOrigins = readonly string[] | "*";

/** CORS_ORIGINS → the policy's origins; undefined for a value that is not a list of origins or `*`. */
export function parseCorsOrigins(raw: string | undefined): CorsOrigins | undefined {
  if (raw === undefined || raw.trim() === "") return [];
  if (raw.trim() === "*") return "*";
  const origins = raw
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  for (const origin of origins) {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return undefined;
    }
    if (parsed.origin !== origin) return undefined;
  }
  return origins;
}
