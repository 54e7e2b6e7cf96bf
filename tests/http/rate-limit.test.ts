import { afterAll, beforeAll, expect, test } from "bun:test";
import { RateLimiter } from "../../src/http/rate-limit";
import { createTestApp, type TestApp } from "../support/app";

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

test("answers a route builds itself (a page, a download) carry the request id and RateLimit-* too, and their bodies whole", async () => {
  const { key } = await t.newAccount({ rateLimitPerMinute: 10 });
  const content = { records: Array.from({ length: 200 }, (_, index) => ({ index, text: "é".repeat(20) })) };
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "built.json", content } });
  expect(created.status).toBe(201);
  const id = created.body.document.id;
  const page = await t.request("GET", "/api/v1/documents?limit=5", { key, headers: { "x-request-id": "page-1" } });
  expect(page.status).toBe(200);
  expect(page.headers.get("x-request-id")).toBe("page-1");
  expect(page.headers.get("ratelimit-remaining")).toBe("8");
  expect(page.headers.get("content-type")).toBe("application/json;charset=utf-8");
  const { documents } = (await page.json()) as { documents: { id: string }[] };
  expect(documents.map((document) => document.id)).toEqual([id]);
  const download = await t.request("GET", `/api/v1/documents/${id}/content`, { key, headers: { "x-request-id": "download-1" } });
  expect(download.status).toBe(200);
  expect(download.headers.get("x-request-id")).toBe("download-1");
  expect(download.headers.get("x-ratelimit-remaining")).toBe("7");
  expect(await download.json()).toEqual(content);
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

test("a bucket untouched for a minute is full again and is dropped: the limiter holds the last minute's accounts, not every account", () => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  for (let n = 0; n < 10_000; n++) limiter.take(`acct_${n}`, 60);
  for (let i = 0; i < 60; i++) limiter.take("busy", 60);
  expect(limiter.size).toBe(10_001);
  now += 30_000; // half refilled: nothing may be dropped yet, the busy account is still limited to what refilled
  expect(limiter.take("busy", 60)).toMatchObject({ allowed: true, remaining: 29 });
  expect(limiter.size).toBe(10_001);
  now += 30_000; // the 10,000 accounts are a minute old: full, dropped; busy took 30 s ago and stays
  expect(limiter.take("late", 60)).toMatchObject({ allowed: true, remaining: 59 });
  expect(limiter.size).toBe(2);
  expect(limiter.take("busy", 60)).toMatchObject({ allowed: true, remaining: 58 });
  expect(limiter.take("acct_7", 60)).toMatchObject({ allowed: true, remaining: 59 });
  now += 60_000;
  limiter.take("another", 60);
  expect(limiter.size).toBe(1);
});

test("a clock that steps back neither drains a bucket nor drops one early", () => {
  let now = 100_000;
  const limiter = new RateLimiter(() => now);
  for (let i = 0; i < 10; i++) limiter.take("a", 60);
  now -= 5_000;
  expect(limiter.take("a", 60)).toMatchObject({ allowed: true, remaining: 49 });
  expect(limiter.take("b", 60).remaining).toBe(59);
  expect(limiter.size).toBe(2);
});
