/** The cluster variables of src/config.ts: defaults, accepted values, and a message naming each bad one. */
import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";

test("defaults: no Redis, no public URL, 20 connections, no drain delay, 30 s drain timeout", () => {
  const config = loadConfig({});
  expect(config).toMatchObject({ redisUrl: undefined, redisPrefix: "kiln:", publicUrl: undefined, databasePoolMax: 20, drainDelayMs: 0, drainTimeoutMs: 30_000 });
});

test("accepted values", () => {
  const config = loadConfig({ REDIS_URL: "rediss://:secret@redis.internal:6380/2", REDIS_PREFIX: "prod:", PUBLIC_URL: "https://kiln.example.com/", DATABASE_POOL_MAX: "5", DRAIN_DELAY_MS: "5000", DRAIN_TIMEOUT_MS: "60000" });
  expect(config).toMatchObject({ redisUrl: "rediss://:secret@redis.internal:6380/2", redisPrefix: "prod:", publicUrl: "https://kiln.example.com", databasePoolMax: 5, drainDelayMs: 5000, drainTimeoutMs: 60_000 });
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
])("%s=%s stops the start with a message naming it", (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(name);
});
