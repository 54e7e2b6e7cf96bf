/**
 * Rate limits shared through Redis (REDIS_URL): one bucket per account for every node, and fail-open to
 * the per-process count while Redis is unreachable, with a warning, recovering when it answers again.
 * Uses the Redis of tests/support/redis.ts (TEST_REDIS_URL, the machine's on 127.0.0.1:6379, or a
 * redis-server started for the file) under a unique key prefix (removed afterwards); "Redis down" is a
 * closed port, or a proxy in front of the real Redis taken down and brought back. Without any Redis, the
 * tests that need one are skipped with the reason; those of a closed port run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { type RateCounter, type RateDecision, RateLimiter, RedisRateLimiter } from "../../src/http/rate-limit";
import { createLogger } from "../../src/observability/logger";
import { createTestApp, type TestApp } from "../support/app";
import { startTestRedis } from "../support/redis";
import { freePort } from "../support/server";
import { startTcpProxy } from "../support/tcp-proxy";

const testRedis = await startTestRedis();
if (testRedis.missing) console.warn(`rate-limit-redis: the tests that need Redis are skipped: ${testRedis.missing}`);
const REDIS_URL = testRedis.url ?? "redis://127.0.0.1:6379";
const withRedis = test.skipIf(testRedis.url === undefined);
const prefix = `kiln-test:${Bun.randomUUIDv7()}:`;
const counters: RateCounter[] = [];
const redis = testRedis.url ? new RedisClient(testRedis.url) : undefined;

/** `url` with its host and port replaced: its credentials and database number stay. */
function throughPort(url: string, port: number): string {
  const moved = new URL(url);
  moved.hostname = "127.0.0.1";
  moved.port = String(port);
  return moved.href;
}

function counter(url = REDIS_URL, lines: string[] = []): RedisRateLimiter {
  const created = new RedisRateLimiter(
    url,
    prefix,
    new RateLimiter(),
    createLogger("info", (line) => lines.push(line)),
  );
  counters.push(created);
  return created;
}

afterAll(async () => {
  for (const created of counters) created.close();
  if (redis) {
    const keys = (await redis.send("KEYS", [`${prefix}*`])) as string[];
    if (keys.length > 0) await redis.send("DEL", keys);
    redis.close();
  }
  await testRedis.close();
});

const take = async (limiter: RateCounter, account: string, perMinute: number): Promise<RateDecision> => limiter.take(account, perMinute);

withRedis("two nodes share one bucket per account: across both, exactly the limit is allowed", async () => {
  const nodes = [counter(), counter()];
  const account = `acc_${Bun.randomUUIDv7()}`;
  const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => take(nodes[i % 2], account, 12)));
  expect(decisions.filter((decision) => decision.allowed).length).toBe(12);
  const refused = decisions.find((decision) => !decision.allowed)!;
  expect(refused).toMatchObject({ limit: 12, remaining: 0 });
  expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(refused.retryAfterSeconds).toBeLessThanOrEqual(5);
  // the bucket lives in Redis under the prefix, with an expiry
  expect(await redis!.send("PTTL", [`${prefix}rate:${account}`])).toBeGreaterThan(0);
  // other accounts have their own bucket
  expect((await take(nodes[1], `acc_${Bun.randomUUIDv7()}`, 12)).allowed).toBe(true);
});

withRedis("a changed limit starts a full bucket of the new size", async () => {
  const node = counter();
  const account = `acc_${Bun.randomUUIDv7()}`;
  for (let i = 0; i < 3; i++) await take(node, account, 3);
  expect((await take(node, account, 3)).allowed).toBe(false);
  expect(await take(node, account, 10)).toMatchObject({ allowed: true, remaining: 9 });
});

test("Redis unreachable (closed port): requests are counted per process, with one warning", async () => {
  const lines: string[] = [];
  const node = counter(`redis://127.0.0.1:${freePort()}`, lines);
  const account = `acc_${Bun.randomUUIDv7()}`;
  const decisions: RateDecision[] = [];
  for (let i = 0; i < 6; i++) decisions.push(await take(node, account, 4));
  expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, false, false]);
  const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.level === "warn");
  expect(warnings.length).toBe(1);
  expect(warnings[0].msg).toContain("Redis is unreachable");
});

withRedis(
  "Redis going away mid-run and coming back: served throughout, shared again once it answers",
  async () => {
    const target = new URL(REDIS_URL);
    const proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port || 6379) });
    const lines: string[] = [];
    const node = counter(throughPort(REDIS_URL, proxy.port), lines);
    const other = counter();
    const account = `acc_${Bun.randomUUIDv7()}`;
    try {
      expect((await take(node, account, 100)).remaining).toBe(99);
      expect((await take(other, account, 100)).remaining).toBe(98); // shared

      proxy.down();
      const whileDown: RateDecision[] = [];
      for (let i = 0; i < 5; i++) whileDown.push(await take(node, account, 100));
      expect(whileDown.every((decision) => decision.allowed)).toBe(true);
      expect(whileDown.at(-1)!.remaining).toBe(95); // the process's own bucket: 100 - 5
      expect(lines.some((line) => line.includes("Redis is unreachable"))).toBe(true);

      proxy.up();
      let shared: RateDecision | undefined;
      for (let attempt = 0; attempt < 100 && !lines.some((line) => line.includes("Redis answers again")); attempt++) {
        shared = await take(node, account, 100);
        await Bun.sleep(50);
      }
      expect(lines.some((line) => line.includes("Redis answers again"))).toBe(true);
      // back on the shared bucket: the count continues from what the other node saw, not the local one
      const before = (await take(other, account, 100)).remaining;
      const after = await take(node, account, 100);
      expect(after.remaining).toBeLessThan(before);
      expect(shared).toBeDefined();
    } finally {
      proxy.close();
    }
  },
  60_000,
);

let t: TestApp | undefined;
beforeAll(async () => {
  if (testRedis.url) t = await createTestApp({}, { rateCounter: counter() });
});
afterAll(async () => {
  await t?.close();
});

withRedis("through HTTP: the shared count gives the usual headers and 429", async () => {
  const app = t!;
  const { key } = await app.newAccount({ rateLimitPerMinute: 2 });
  const first = await app.request("GET", "/api/v1/usage", { key });
  expect(first.status).toBe(200);
  expect(first.headers.get("ratelimit-limit")).toBe("2");
  expect(first.headers.get("ratelimit-remaining")).toBe("1");
  expect((await app.request("GET", "/api/v1/usage", { key })).status).toBe(200);
  const limited = await app.json("GET", "/api/v1/usage", { key });
  expect(limited.status).toBe(429);
  expect(limited.body.code).toBe("rate_limited");
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
});

test("a bad key is 401 even while Redis is down (fail open on rate limits only)", async () => {
  const down = await createTestApp({}, { rateCounter: counter(`redis://127.0.0.1:${freePort()}`) });
  try {
    expect((await down.request("GET", "/api/v1/usage", { key: "kiln_not_a_real_key_0123456789abcdef" })).status).toBe(401);
    const { key } = await down.newAccount({ rateLimitPerMinute: 1 });
    expect((await down.request("GET", "/api/v1/usage", { key })).status).toBe(200);
    expect((await down.request("GET", "/api/v1/usage", { key })).status).toBe(429);
  } finally {
    await down.close();
  }
}, 60_000);
