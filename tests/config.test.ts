/**
 * The content store part of the configuration (CONTENT_STORE and the S3_* or AWS_* variables) and the
 * cluster variables (REDIS_URL, REDIS_PREFIX, PUBLIC_URL, DATABASE_POOL_MAX, DRAIN_*), and HTTP_LISTENER.
 */
import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";

const S3 = { CONTENT_STORE: "s3", S3_BUCKET: "kiln-content", S3_ACCESS_KEY_ID: "AKIA", S3_SECRET_ACCESS_KEY: "secret" };
const message = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("loadConfig accepted it");
};

test("the disk store by default; s3 with its variables and the default prefix kiln/", () => {
  expect(loadConfig({}).contentStore).toEqual({ kind: "disk" });
  expect(loadConfig({ ...S3, S3_ENDPOINT: "http://127.0.0.1:9000", S3_REGION: "eu-west-1", S3_SESSION_TOKEN: "tok" }).contentStore).toEqual(
    {
      kind: "s3",
      s3: {
        bucket: "kiln-content",
        endpoint: "http://127.0.0.1:9000",
        region: "eu-west-1",
        accessKeyId: "AKIA",
        secretAccessKey: "secret",
        sessionToken: "tok",
        prefix: "kiln/",
        timeoutMs: 15_000,
      },
    },
  );
  expect(loadConfig({ ...S3, S3_TIMEOUT_MS: "2500" }).contentStore).toMatchObject({ s3: { timeoutMs: 2500 } });
  expect(message({ ...S3, S3_TIMEOUT_MS: "10" })).toContain("S3_TIMEOUT_MS");
});

test("the AWS_* names work too, and S3_* wins when both are set", () => {
  const aws = loadConfig({
    CONTENT_STORE: "s3",
    AWS_BUCKET: "b",
    AWS_ACCESS_KEY_ID: "k",
    AWS_SECRET_ACCESS_KEY: "s",
    AWS_REGION: "r",
    AWS_ENDPOINT: "https://e.example",
  }).contentStore;
  expect(aws).toMatchObject({ s3: { bucket: "b", accessKeyId: "k", secretAccessKey: "s", region: "r", endpoint: "https://e.example" } });
  expect(loadConfig({ ...S3, AWS_BUCKET: "other" }).contentStore).toMatchObject({ s3: { bucket: "kiln-content" } });
  expect(loadConfig({ ...S3, S3_PREFIX: "" }).contentStore).toMatchObject({ s3: { prefix: "" } });
});

test("bad or missing values stop the start naming the variable", () => {
  expect(message({ CONTENT_STORE: "ftp" })).toContain("CONTENT_STORE");
  expect(message({ CONTENT_STORE: "s3" })).toContain("S3_BUCKET");
  expect(message({ ...S3, S3_ACCESS_KEY_ID: "" })).toContain("S3_ACCESS_KEY_ID");
  expect(message({ ...S3, S3_SECRET_ACCESS_KEY: "" })).toContain("S3_SECRET_ACCESS_KEY");
  expect(message({ ...S3, S3_ENDPOINT: "not a url" })).toContain("S3_ENDPOINT");
  expect(message({ ...S3, S3_ENDPOINT: "ftp://host" })).toContain("S3_ENDPOINT");
  expect(message({ ...S3, S3_PREFIX: "/kiln/" })).toContain("S3_PREFIX");
  expect(message({ ...S3, S3_PREFIX: "a\nb" })).toContain("S3_PREFIX");
});

test("defaults: no Redis, no public URL, 20 connections, no drain delay, 30 s drain timeout, 20 ms inline budget", () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    redisUrl: undefined,
    redisPrefix: "kiln:",
    publicUrl: undefined,
    databasePoolMax: 20,
    databaseLimits: { lockTimeoutMs: 5_000, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 10_000, acquireTimeoutMs: 10_000 },
    databaseStalledHealthMs: 60_000,
    drainDelayMs: 0,
    drainTimeoutMs: 30_000,
    utilityInlineBudgetMs: 20,
  });
});

test("accepted values", () => {
  const config = loadConfig({
    REDIS_URL: "rediss://:secret@redis.internal:6380/2",
    REDIS_PREFIX: "prod:",
    PUBLIC_URL: "https://kiln.example.com/",
    DATABASE_POOL_MAX: "5",
    DATABASE_LOCK_TIMEOUT_MS: "0",
    DATABASE_STATEMENT_TIMEOUT_MS: "120000",
    DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "2000",
    DATABASE_ACQUIRE_TIMEOUT_MS: "500",
    DATABASE_STALLED_HEALTH_MS: "90000",
    DRAIN_DELAY_MS: "5000",
    DRAIN_TIMEOUT_MS: "60000",
    UTILITY_INLINE_BUDGET_MS: "5",
  });
  expect(config).toMatchObject({
    redisUrl: "rediss://:secret@redis.internal:6380/2",
    redisPrefix: "prod:",
    publicUrl: "https://kiln.example.com",
    databasePoolMax: 5,
    databaseLimits: { lockTimeoutMs: 0, statementTimeoutMs: 120_000, idleInTransactionTimeoutMs: 2_000, acquireTimeoutMs: 500 },
    databaseStalledHealthMs: 90_000,
    drainDelayMs: 5000,
    drainTimeoutMs: 60_000,
    utilityInlineBudgetMs: 5,
  });
  expect(loadConfig({ REDIS_URL: "valkey://127.0.0.1:6379" }).redisUrl).toBe("valkey://127.0.0.1:6379");
});

test.each([
  ["REDIS_URL", "http://127.0.0.1:6379"],
  ["REDIS_URL", "127.0.0.1:6379"],
  ["PUBLIC_URL", "kiln.example.com"],
  ["PUBLIC_URL", "ftp://kiln.example.com"],
  ["DATABASE_POOL_MAX", "0"],
  ["DATABASE_POOL_MAX", "many"],
  ["DRAIN_DELAY_MS", "-1"],
  ["DRAIN_TIMEOUT_MS", "soon"],
  ["UTILITY_INLINE_BUDGET_MS", "0"],
  ["UTILITY_INLINE_BUDGET_MS", "60001"],
  ["DATABASE_LOCK_TIMEOUT_MS", "-1"],
  ["DATABASE_STATEMENT_TIMEOUT_MS", "30s"],
  ["DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", "3600001"],
  ["DATABASE_ACQUIRE_TIMEOUT_MS", "0"],
  ["DATABASE_STALLED_HEALTH_MS", "999"],
])("%s=%s stops the start with a message naming it", (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});

test("HTTP_LISTENER: bun by default, node on request, anything else stops the start", () => {
  expect(loadConfig({}).httpListener).toBe("bun");
  expect(loadConfig({ HTTP_LISTENER: "" }).httpListener).toBe("bun");
  expect(loadConfig({ HTTP_LISTENER: "node" }).httpListener).toBe("node");
  expect(message({ HTTP_LISTENER: "uws" })).toBe("HTTP_LISTENER must be one of bun, node, got 'uws'");
});

test("an account's share of the worker pool: half the workers (rounded up) and 4 waiting runs by default, at most every worker", () => {
  expect(loadConfig({ UTILITY_WORKERS: "2" })).toMatchObject({ utilityWorkersPerAccount: 1, utilityQueuePerAccount: 4 });
  expect(loadConfig({ UTILITY_WORKERS: "5" }).utilityWorkersPerAccount).toBe(3);
  expect(loadConfig({ UTILITY_WORKERS: "1" }).utilityWorkersPerAccount).toBe(1);
  expect(loadConfig({ UTILITY_WORKERS: "4", UTILITY_WORKERS_PER_ACCOUNT: "4", UTILITY_QUEUE_PER_ACCOUNT: "0" })).toMatchObject({
    utilityWorkersPerAccount: 4,
    utilityQueuePerAccount: 0,
  });
  expect(message({ UTILITY_WORKERS: "4", UTILITY_WORKERS_PER_ACCOUNT: "5" })).toBe(
    "UTILITY_WORKERS_PER_ACCOUNT must be between 1 and 4, got 5",
  );
  expect(message({ UTILITY_WORKERS_PER_ACCOUNT: "0" })).toContain("UTILITY_WORKERS_PER_ACCOUNT");
  expect(message({ UTILITY_QUEUE_PER_ACCOUNT: "-1" })).toContain("UTILITY_QUEUE_PER_ACCOUNT");
});

test("event stream limits: 20 per key, 100 per account, 10,000 per process by default; each at least 1", () => {
  expect(loadConfig({}).eventStreamLimits).toEqual({ perKey: 20, perAccount: 100, perProcess: 10_000 });
  expect(
    loadConfig({ EVENT_STREAMS_PER_KEY: "3", EVENT_STREAMS_PER_ACCOUNT: "7", EVENT_STREAMS_PER_PROCESS: "50" }).eventStreamLimits,
  ).toEqual({ perKey: 3, perAccount: 7, perProcess: 50 });
  for (const name of ["EVENT_STREAMS_PER_KEY", "EVENT_STREAMS_PER_ACCOUNT", "EVENT_STREAMS_PER_PROCESS"]) {
    expect(() => loadConfig({ [name]: "0" })).toThrow(name);
    expect(() => loadConfig({ [name]: "many" })).toThrow(name);
  }
});
