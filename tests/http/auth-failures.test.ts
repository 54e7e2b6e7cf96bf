/**
 * Failed authentication is cheap and bounded: refused keys are cached apart from valid ones (a flood
 * of unknown keys evicts nothing and repeats cost no lookup), and a client whose keys keep failing is
 * throttled with 429 and Retry-After, while a valid key in use is never locked out.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, ADMIN_KEY, type TestApp } from "../support/app";
import { AUTH_CACHE_MAX, AUTH_FAILURE_WINDOW_MS, AUTH_FAILURES_MAX, Authenticator } from "../../src/http/auth";
import { setClientAddress } from "../../src/http/context";

let t: TestApp;
let clock = 1_800_000_000_000;
beforeAll(async () => { t = await createTestApp({}, { now: () => clock }); });
afterAll(async () => { await t.close(); });

const unknownKey = (i: number) => `kiln_unknown${String(i).padStart(32, "0")}`;
const rejection = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as { status: number; code: string; extra: { headers?: Record<string, string> } });

test("10,000 distinct unknown keys from one client cost at most AUTH_FAILURES_MAX lookups; then 429 with Retry-After", async () => {
  const auth = new Authenticator(t.testDb.database.db, () => clock);
  const { key } = await t.newAccount();
  await auth.principalFor(key, "192.0.2.1"); // seen valid before the flood
  const before = auth.lookups;
  const answers = new Map<number, number>();
  let retryAfter: string | undefined;
  for (let i = 0; i < 10_000; i++) {
    const error = await rejection(auth.principalFor(unknownKey(i), "192.0.2.1"));
    answers.set(error!.status, (answers.get(error!.status) ?? 0) + 1);
    if (error!.status === 429) retryAfter = error!.extra.headers?.["Retry-After"];
  }
  expect(auth.lookups - before).toBe(AUTH_FAILURES_MAX);
  expect(answers.get(401)).toBe(AUTH_FAILURES_MAX);
  expect(answers.get(429)).toBe(10_000 - AUTH_FAILURES_MAX);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(AUTH_FAILURE_WINDOW_MS / 1000);
  // the valid key in use from the same client is still served, its cache entry expired or not
  clock += 1_000;
  expect((await auth.principalFor(key, "192.0.2.1")).accountId).toBeString();
  // another client is not affected
  expect((await rejection(auth.principalFor(unknownKey(0), "192.0.2.2")))!.status).toBe(401);
  // a key never seen valid waits for the window to end, then works
  const fresh = await t.newAccount();
  expect((await rejection(auth.principalFor(fresh.key, "192.0.2.1")))!.status).toBe(429);
  clock += AUTH_FAILURE_WINDOW_MS;
  expect((await auth.principalFor(fresh.key, "192.0.2.1")).accountId).toBe(fresh.accountId);
});

test("a repeated unknown key is looked up once per cache period; a flood of unknown keys does not evict valid ones", async () => {
  const auth = new Authenticator(t.testDb.database.db, () => clock);
  const { key } = await t.newAccount();
  await auth.principalFor(key);
  const before = auth.lookups;
  for (let i = 0; i < 50; i++) await rejection(auth.principalFor(unknownKey(1)));
  expect(auth.lookups - before).toBe(1);
  for (let i = 0; i < AUTH_CACHE_MAX + 500; i++) await rejection(auth.principalFor(unknownKey(100_000 + i)));
  const afterFlood = auth.lookups;
  await auth.principalFor(key);
  expect(auth.lookups).toBe(afterFlood); // still cached: no wipe, no eviction by refused keys
});

test("over HTTP: a client with a peer address gets 429 too_many_failed_authentications with Retry-After, problem+json", async () => {
  const call = (key: string) => {
    const request = new Request("http://localhost/api/v1/usage", { headers: { authorization: `Bearer ${key}` } });
    setClientAddress(request, "198.51.100.7");
    return t.app.handle(request);
  };
  clock += AUTH_FAILURE_WINDOW_MS;
  expect((await call(ADMIN_KEY)).status).toBe(200);
  for (let i = 0; i < AUTH_FAILURES_MAX; i++) expect((await call(unknownKey(500_000 + i))).status).toBe(401);
  const throttled = await call(unknownKey(600_000));
  expect(throttled.status).toBe(429);
  expect(throttled.headers.get("content-type")).toBe("application/problem+json");
  expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(((await throttled.json()) as { code: string }).code).toBe("too_many_failed_authentications");
  clock += 1_000; // past the key cache: the valid key in use is looked up again, not throttled
  expect((await call(ADMIN_KEY)).status).toBe(200);
});
