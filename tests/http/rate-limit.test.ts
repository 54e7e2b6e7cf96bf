import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { RateLimiter } from "../../src/http/rate-limit";

let clock = 1_800_000_000_000;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

test("every authenticated response carries RateLimit-* and X-RateLimit-*", async () => {
  const { key } = await t.newAccount({ rateLimitPerMinute: 10 });
  const res = await t.request("GET", "/api/v1/usage", { key });
  expect(res.status).toBe(200);
  expect(res.headers.get("ratelimit-limit")).toBe("10");
  expect(res.headers.get("ratelimit-remaining")).toBe("9");
  expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  expect(res.headers.get("x-ratelimit-limit")).toBe("10");
  expect(res.headers.get("x-ratelimit-remaining")).toBe("9");
  expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(clock / 1000);
  const forbidden = await t.request("GET", "/api/v1/admin/keys", { key });
  expect(forbidden.status).toBe(403);
  expect(forbidden.headers.get("ratelimit-remaining")).toBe("8");
});

test("beyond the limit: 429 rate_limited with Retry-After; refills with time", async () => {
  const { key } = await t.newAccount({ rateLimitPerMinute: 3 });
  for (let i = 0; i < 3; i++) expect((await t.request("GET", "/api/v1/usage", { key })).status).toBe(200);
  const limited = await t.json("GET", "/api/v1/usage", { key });
  expect(limited.status).toBe(429);
  expect(limited.headers.get("content-type")).toBe("application/problem+json");
  expect(limited.body).toMatchObject({ success: false, code: "rate_limited", status: 429 });
  expect(limited.headers.get("retry-after")).toBe("20");
  expect(limited.headers.get("ratelimit-remaining")).toBe("0");
  clock += 20_000;
  expect((await t.request("GET", "/api/v1/usage", { key })).status).toBe(200);
});

test("the order of checks is 401 → 429 → 403, as docs/api.md states: a rate-limited key without the permission gets 429, a bad key 401", async () => {
  const { key } = await t.newAccount({ rateLimitPerMinute: 1, permissions: ["utilities"] });
  expect((await t.json("GET", "/api/v1/documents", { key })).body.code).toBe("forbidden"); // counted, then refused
  const limited = await t.json("POST", "/api/v1/documents", { key, rawBody: "{" }); // no permission, a bad body, and no requests left
  expect([limited.status, limited.body.code]).toEqual([429, "rate_limited"]);
  const badKey = await t.json("POST", "/api/v1/documents", { key: "kiln_unknownKeyForTheOrderOfChecks0000000", rawBody: "{" });
  expect([badKey.status, badKey.body.code]).toEqual([401, "unauthorized"]);
});

test("the limit is per account: two keys of one account share it, other accounts do not", async () => {
  const first = await t.newAccount({ rateLimitPerMinute: 2 });
  const second = await t.json("POST", "/api/v1/admin/keys", { body: { accountId: first.accountId, permissions: ["documents"] } });
  const other = await t.newAccount({ rateLimitPerMinute: 2 });
  expect((await t.request("GET", "/api/v1/usage", { key: first.key })).status).toBe(200);
  expect((await t.request("GET", "/api/v1/usage", { key: second.body.key })).status).toBe(200);
  expect((await t.request("GET", "/api/v1/usage", { key: first.key })).status).toBe(429);
  expect((await t.request("GET", "/api/v1/usage", { key: other.key })).status).toBe(200);
});

test("token bucket arithmetic", () => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  expect(limiter.take("a", 60)).toMatchObject({ allowed: true, remaining: 59 });
  for (let i = 0; i < 59; i++) limiter.take("a", 60);
  expect(limiter.take("a", 60)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
  now += 1000;
  expect(limiter.take("a", 60).allowed).toBe(true);
});
