/**
 * Failed authentication is cheap and bounded: refused keys are cached apart from valid ones (a flood
 * of unknown keys evicts nothing and repeats cost no lookup), and a client whose keys keep failing is
 * throttled with 429 and Retry-After without database lookups, while any valid key, even one sent from
 * the throttled address, is still served.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hashApiKey, newId } from "../../../src/core/keys";
import {
  AUTH_CACHE_MAX,
  AUTH_FAILURE_WINDOW_MS,
  AUTH_FAILURES_MAX,
  AUTH_NODE_FAILURES_MAX,
  Authenticator,
  clientOf,
  KEY_CACHE_MS,
} from "../../../src/modules/auth";
import { keysRepository } from "../../../src/modules/auth/repository";
import { setClientAddress } from "../../../src/server/transport";
import { ADMIN_KEY, createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let clock = 1_800_000_000_000;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

let unknownKeys = 0;
const unknownKey = () => `kiln_unknown${String(unknownKeys++).padStart(32, "0")}`;
type Refusal = { status: number; code: string; extra: { headers?: Record<string, string> } };
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("authenticated");
    },
    (error: unknown) => error as Refusal,
  );
const newAuthenticator = () => new Authenticator(t.testDb.database.db, () => clock);

/** Throttles `address` on `auth` with AUTH_FAILURES_MAX unknown keys; the window then runs from `clock`. */
async function throttle(auth: Authenticator, address: string): Promise<void> {
  for (let i = 0; i < AUTH_FAILURES_MAX; i++) expect((await rejection(auth.principalFor(unknownKey(), address))).status).toBe(401);
  expect((await rejection(auth.principalFor(unknownKey(), address))).status).toBe(429);
}

test("a concurrent flood of 10,000 distinct unknown keys from one client costs AUTH_FAILURES_MAX lookups and one read of the key index; the rest get 429 with Retry-After", async () => {
  const auth = newAuthenticator();
  const answers = await Promise.all(Array.from({ length: 10_000 }, () => rejection(auth.principalFor(unknownKey(), "192.0.2.1"))));
  expect(auth.lookups).toBe(AUTH_FAILURES_MAX);
  expect(auth.keyIndex.reads).toBe(1);
  expect(answers.filter((answer) => answer.status === 401)).toHaveLength(AUTH_FAILURES_MAX);
  const throttled = answers.filter((answer) => answer.status === 429);
  expect(throttled).toHaveLength(10_000 - AUTH_FAILURES_MAX);
  for (const answer of throttled) {
    expect(answer.code).toBe("too_many_failed_authentications");
    expect(Number(answer.extra.headers?.["Retry-After"])).toBeWithin(1, AUTH_FAILURE_WINDOW_MS / 1000 + 1);
  }
  // another client is not affected; the throttled one is looked up again once its window is over
  expect((await rejection(auth.principalFor(unknownKey(), "192.0.2.2"))).status).toBe(401);
  clock += AUTH_FAILURE_WINDOW_MS;
  expect((await rejection(auth.principalFor(unknownKey(), "192.0.2.1"))).status).toBe(401);
});

test("a valid key is never locked out: from a throttled address, a key in use, one this node never saw and one created after the flood began are all served", async () => {
  const auth = newAuthenticator();
  const inUse = await t.newAccount();
  const neverSeen = await t.newAccount();
  await auth.principalFor(inUse.key, "192.0.2.10");
  await throttle(auth, "192.0.2.10");
  const createdSince = await t.newAccount(); // on another node, as far as `auth` knows: not in its key index yet
  clock += KEY_CACHE_MS; // past the cache of the key in use
  for (const { key, accountId } of [inUse, neverSeen, createdSince]) {
    expect((await auth.principalFor(key, "192.0.2.10")).accountId).toBe(accountId);
  }
  // the address is still throttled for unknown keys, and a revocation still takes effect within a second
  expect((await rejection(auth.principalFor(unknownKey(), "192.0.2.10"))).status).toBe(429);
  const keyId = (await keysRepository(t.testDb.database.db).findByHash(hashApiKey(neverSeen.key)))!.id;
  await keysRepository(t.testDb.database.db).revoke(keyId, clock);
  clock += 1_000;
  const revoked = await rejection(auth.principalFor(neverSeen.key, "192.0.2.10"));
  expect([revoked.status, revoked.code]).toEqual([401, "unauthorized"]);
});

test("lookups in vain from many addresses together throttle every client at AUTH_NODE_FAILURES_MAX, valid keys excepted", async () => {
  const auth = newAuthenticator();
  const { key, accountId } = await t.newAccount();
  // a key refused again and again costs no lookup: it throttles its client, not the node
  const repeated = unknownKey();
  for (let i = 0; i < AUTH_NODE_FAILURES_MAX; i++) await rejection(auth.principalFor(repeated, "203.0.113.9"));
  expect((await rejection(auth.principalFor(unknownKey(), "203.0.113.1"))).status).toBe(401);
  expect(auth.lookups).toBe(2);
  const addresses = 2 * AUTH_NODE_FAILURES_MAX;
  const answers = await Promise.all(
    Array.from({ length: addresses }, (_, i) => rejection(auth.principalFor(unknownKey(), `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`))),
  );
  expect(auth.lookups).toBe(AUTH_NODE_FAILURES_MAX); // the two before the flood count too
  expect(answers.filter((answer) => answer.status === 429)).toHaveLength(addresses - (AUTH_NODE_FAILURES_MAX - 2));
  expect((await rejection(auth.principalFor(unknownKey(), "203.0.113.1"))).status).toBe(429);
  expect((await auth.principalFor(key, "203.0.113.1")).accountId).toBe(accountId);
});

test("a secret refused once works once a key with it exists, within the cache period", async () => {
  const auth = newAuthenticator();
  const secret = unknownKey();
  expect((await rejection(auth.principalFor(secret, "192.0.2.20"))).status).toBe(401);
  const { accountId } = await t.newAccount();
  await keysRepository(t.testDb.database.db).insert({
    id: newId("key"),
    accountId,
    keyHash: hashApiKey(secret),
    permissions: ["documents"],
    createdAt: clock,
  });
  clock += KEY_CACHE_MS;
  expect((await auth.principalFor(secret, "192.0.2.20")).accountId).toBe(accountId);
});

test("the addresses of one IPv6 /64 share a throttle; another /64 and IPv4 clients do not", async () => {
  expect(clientOf("2001:db8:0:1::5")).toBe(clientOf("2001:0db8:0000:0001:ffff:1:2:3"));
  expect(clientOf("::ffff:192.0.2.7")).toBe("192.0.2.7");
  const auth = newAuthenticator();
  for (let i = 1; i <= AUTH_FAILURES_MAX; i++) await rejection(auth.principalFor(unknownKey(), `2001:db8:0:1::${i.toString(16)}`));
  expect((await rejection(auth.principalFor(unknownKey(), "2001:db8:0:1:abcd::1"))).status).toBe(429);
  expect((await rejection(auth.principalFor(unknownKey(), "2001:db8:0:2::1"))).status).toBe(401);
  expect((await rejection(auth.principalFor(unknownKey(), "192.0.2.30"))).status).toBe(401);
});

test("refused keys are kept apart, in a bounded map: a repeat costs no lookup, a flood evicts no valid key, and the oldest refused key goes first", async () => {
  const auth = newAuthenticator();
  const { key } = await t.newAccount();
  await auth.principalFor(key);
  const repeated = unknownKey();
  for (let i = 0; i < 50; i++) await rejection(auth.principalFor(repeated));
  expect(auth.lookups).toBe(2);
  const flood = Array.from({ length: AUTH_CACHE_MAX + 500 }, unknownKey);
  for (const unknown of flood) await rejection(auth.principalFor(unknown));
  const afterFlood = auth.lookups;
  await auth.principalFor(key);
  expect(auth.lookups).toBe(afterFlood); // still cached: no wipe, no eviction by refused keys
  await rejection(auth.principalFor(flood.at(-1)!));
  expect(auth.lookups).toBe(afterFlood); // the newest refusals are kept
  await rejection(auth.principalFor(flood[0]));
  expect(auth.lookups).toBe(afterFlood + 1); // the oldest went: the map holds AUTH_CACHE_MAX at most
}, 30_000); // 10,000 refused lookups: about 4.6 s alone, more on a loaded machine

test("a key costs one lookup per cache period, valid or not, however many requests carry it at once", async () => {
  const auth = newAuthenticator();
  const { key, accountId } = await t.newAccount();
  const unknown = unknownKey();
  const valid = await Promise.all(Array.from({ length: 100 }, () => auth.principalFor(key, "192.0.2.40")));
  const refused = await Promise.all(Array.from({ length: 100 }, () => rejection(auth.principalFor(unknown))));
  expect(valid.every((principal) => principal.accountId === accountId)).toBeTrue();
  expect(refused.every((answer) => answer.status === 401)).toBeTrue();
  expect(auth.lookups).toBe(2);
  clock += KEY_CACHE_MS;
  await Promise.all(Array.from({ length: 100 }, () => auth.principalFor(key, "192.0.2.40")));
  expect(auth.lookups).toBe(3);
});

test("over HTTP: a client with a peer address gets 429 too_many_failed_authentications with Retry-After, problem+json; a valid key from it gets 200", async () => {
  const call = (key: string) => {
    const request = new Request("http://localhost/api/v1/usage", { headers: { authorization: `Bearer ${key}` } });
    setClientAddress(request, () => "198.51.100.7");
    return t.app.handle(request);
  };
  clock += AUTH_FAILURE_WINDOW_MS;
  for (let i = 0; i < AUTH_FAILURES_MAX; i++) expect((await call(unknownKey())).status).toBe(401);
  const throttled = await call(unknownKey());
  expect(throttled.status).toBe(429);
  expect(throttled.headers.get("content-type")).toBe("application/problem+json");
  expect(Number(throttled.headers.get("retry-after"))).toBeWithin(1, AUTH_FAILURE_WINDOW_MS / 1000 + 1);
  expect(((await throttled.json()) as { code: string }).code).toBe("too_many_failed_authentications");
  expect((await call(ADMIN_KEY)).status).toBe(200);
  expect((await call(unknownKey())).status).toBe(429);
});
