import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashApiKey } from "../../../src/core/keys";
import { keysRepository } from "../../../src/modules/auth/repository";
import { ADMIN_KEY, createTestApp, type TestApp } from "../../support/app";

let clock = Date.now();
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

function expectUnauthorized(res: { status: number; headers: Headers; body: any }) {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe("Bearer");
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ success: false, code: "unauthorized", status: 401, title: "Unauthorized" });
}

describe("401", () => {
  test("missing Authorization header", async () => {
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key: null }));
  });
  test("wrong scheme", async () => {
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key: null, headers: { authorization: `Basic ${btoa("a:b")}` } }));
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key: null, headers: { authorization: ADMIN_KEY } }));
  });
  test("unknown key", async () => {
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key: "kiln_00000000000000000000000000000000" }));
  });
  test("a key in the query string is never read: access_token is 400 token_in_query, other names leave it unauthenticated", async () => {
    const refused = await t.json("GET", `/api/v1/usage?access_token=${ADMIN_KEY}`, { key: null });
    expect([refused.status, refused.body.code]).toEqual([400, "token_in_query"]);
    for (const name of ["api_key", "key"]) {
      expectUnauthorized(await t.json("GET", `/api/v1/usage?${name}=${ADMIN_KEY}`, { key: null }));
    }
  });
  test("revoked key answers 401 at once in this process", async () => {
    const { key } = await t.newAccount();
    expect((await t.json("GET", "/api/v1/usage", { key })).status).toBe(200);
    const keyId = (await keysRepository(t.testDb.database.db).findByHash(hashApiKey(key)))!.id;
    const revoked = await t.json("DELETE", `/api/v1/admin/keys/${keyId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.revokedAt).toBeNumber();
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key }));
  });
  test("revoked by another process (straight in the database): 401 within one second", async () => {
    const { key } = await t.newAccount();
    expect((await t.json("GET", "/api/v1/usage", { key })).status).toBe(200);
    const keyId = (await keysRepository(t.testDb.database.db).findByHash(hashApiKey(key)))!.id;
    await keysRepository(t.testDb.database.db).revoke(keyId, clock);
    clock += 1000;
    expectUnauthorized(await t.json("GET", "/api/v1/usage", { key }));
  });
  test("expired key", async () => {
    const { accountId } = await t.newAccount();
    const created = await t.json("POST", "/api/v1/admin/keys", {
      body: { accountId, permissions: ["documents"], expiresAt: Date.now() + 60_000 },
    });
    expect(created.status).toBe(201);
    expect((await t.json("GET", "/api/v1/usage", { key: created.body.key })).status).toBe(200);
    clock = Date.now() + 120_000;
    const res = await t.json("GET", "/api/v1/usage", { key: created.body.key });
    expectUnauthorized(res);
    expect(res.body.detail).toContain("expired");
    clock = Date.now();
  });
  test("401 comes before 400: a bad key with a malformed or invalid body", async () => {
    expectUnauthorized(await t.json("POST", "/api/v1/admin/accounts", { key: "kiln_nope", rawBody: "{bad json" }));
    expectUnauthorized(await t.json("POST", "/api/v1/admin/accounts", { key: "kiln_nope", body: { name: 5, extra: true } }));
    expectUnauthorized(await t.json("POST", "/api/v1/documents", { key: null, rawBody: "{" }));
  });
  test("401 comes before 404 for unknown routes under /api", async () => {
    expectUnauthorized(await t.json("GET", "/api/v1/does-not-exist", { key: null }));
  });
});

describe("403 per permission and area", () => {
  const areas: [string, string, string][] = [
    ["documents", "GET", "/api/v1/documents"],
    ["documents", "GET", "/api/v1/folders"],
    ["utilities", "GET", "/api/v1/utilities"],
    ["admin", "GET", "/api/v1/admin/keys"],
  ];
  for (const held of ["documents", "utilities", "admin"] as const) {
    for (const [needed, method, path] of areas) {
      test(`a key with only '${held}' on ${method} ${path}`, async () => {
        const { key } = await t.newAccount({ permissions: [held] });
        const res = await t.json(method, path, { key });
        if (held === needed) expect(res.status).not.toBeOneOf([401, 403]);
        else {
          expect(res.status).toBe(403);
          expect(res.body).toMatchObject({ code: "forbidden", status: 403 });
          expect(res.body.detail).toContain(needed);
        }
      });
    }
  }
  test("403 comes before 400 and before 404", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    expect((await t.json("POST", "/api/v1/admin/accounts", { key, rawBody: "{" })).status).toBe(403);
    expect((await t.json("GET", "/api/v1/admin/nothing-here", { key })).status).toBe(403);
  });
  test("usage needs only a valid key", async () => {
    for (const permission of ["documents", "utilities", "admin"] as const) {
      const { key } = await t.newAccount({ permissions: [permission] });
      expect((await t.json("GET", "/api/v1/usage", { key })).status).toBe(200);
    }
  });
});

test("no key or secret ever reaches the log", async () => {
  const { key } = await t.newAccount();
  await t.json("GET", "/api/v1/usage", { key });
  await t.json("GET", "/api/v1/usage", { key: "kiln_wrongwrongwrongwrongwrongwrongwrong" });
  const log = t.logLines.join("\n");
  expect(log).toContain('"path":"/api/v1/usage"');
  expect(log).not.toContain(key);
  expect(log).not.toContain(ADMIN_KEY);
  expect(log).not.toContain("kiln_wrongwrong");
});

test("only SHA-256 hashes are stored", async () => {
  const created = await t.json("POST", "/api/v1/admin/keys", { body: { accountId: "acc_default", permissions: ["documents"] } });
  const rows = await t.testDb.database.sql`select key_hash from api_keys`;
  const stored = JSON.stringify(rows);
  expect(stored).not.toContain(created.body.key);
  expect(rows.map((r) => r.key_hash)).toContain(hashApiKey(created.body.key));
});
