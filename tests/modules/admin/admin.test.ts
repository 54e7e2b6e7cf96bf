import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PLANS } from "../../../src/core/plans";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe("accounts", () => {
  test("plan defaults, every plan", async () => {
    for (const [plan, limits] of Object.entries(PLANS)) {
      const res = await t.json("POST", "/api/v1/admin/accounts", { body: { name: `acme-${plan}`, plan } });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      expect(res.body.account).toMatchObject({ name: `acme-${plan}`, plan, storageUsedBytes: 0, ...limits });
      expect(res.body.account.id).toStartWith("acc_");
      expect(res.body.account.createdAt).toBeNumber();
    }
  });
  test("no plan means unlimited; explicit limits override, null = unlimited", async () => {
    const res = await t.json("POST", "/api/v1/admin/accounts", {
      body: { name: "x", plan: "starter", storageLimitBytes: 1234, monthlyCredits: null },
    });
    expect(res.body.account).toMatchObject({
      plan: "starter",
      storageLimitBytes: 1234,
      monthlyCredits: null,
      maxDocumentBytes: 5_000_000,
      rateLimitPerMinute: 60,
    });
    const plain = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "y" } });
    expect(plain.body.account).toMatchObject({ plan: "unlimited", storageLimitBytes: null, maxDocumentBytes: 50_000_000 });
  });
  test("get and patch", async () => {
    const { body } = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "p", plan: "starter" } });
    const id = body.account.id;
    expect((await t.json("GET", `/api/v1/admin/accounts/${id}`)).body.account).toEqual(body.account);
    const patched = await t.json("PATCH", `/api/v1/admin/accounts/${id}`, { body: { rateLimitPerMinute: 5 } });
    expect(patched.status).toBe(200);
    expect(patched.body.account).toMatchObject({ plan: "starter", rateLimitPerMinute: 5, monthlyCredits: 100 });
    const upgraded = await t.json("PATCH", `/api/v1/admin/accounts/${id}`, { body: { plan: "pro", monthlyCredits: 7 } });
    expect(upgraded.body.account).toMatchObject({ plan: "pro", rateLimitPerMinute: 600, monthlyCredits: 7, maxDocumentBytes: 10_000_000 });
  });
  test("404 for unknown accounts", async () => {
    const res = await t.json("GET", "/api/v1/admin/accounts/acc_nope");
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("account_not_found");
    expect((await t.json("PATCH", "/api/v1/admin/accounts/acc_nope", { body: { name: "z" } })).status).toBe(404);
  });
  test("400 naming each offending field", async () => {
    const res = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "", plan: "gold", storageLimitBytes: -1, id: "acc_mine" } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["/name", "/plan", "/storageLimitBytes", "/id"]));
    expect((await t.json("PATCH", "/api/v1/admin/accounts/acc_default", { body: {} })).status).toBe(400);
  });
  test("numbers given as strings are refused, not coerced", async () => {
    const res = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "s", storageLimitBytes: "1234" } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.path)).toEqual(["/storageLimitBytes"]);
  });
});

describe("keys", () => {
  test("create, list without secrets, revoke", async () => {
    const { body: acc } = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "k" } });
    const created = await t.json("POST", "/api/v1/admin/keys", {
      body: { accountId: acc.account.id, permissions: ["documents", "utilities"], name: "ci" },
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^kiln_[0-9A-Za-z]{32,}$/);
    expect(created.body.apiKey).toEqual({
      id: expect.stringMatching(/^key_/),
      accountId: acc.account.id,
      name: "ci",
      permissions: ["documents", "utilities"],
      createdAt: expect.any(Number),
      expiresAt: null,
    });
    const listed = await t.json("GET", `/api/v1/admin/keys?accountId=${acc.account.id}`);
    expect(listed.body.keys).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect((await t.json("GET", "/api/v1/usage", { key: created.body.key })).status).toBe(200);
    expect((await t.json("DELETE", `/api/v1/admin/keys/${created.body.apiKey.id}`)).status).toBe(200);
    expect((await t.json("GET", "/api/v1/usage", { key: created.body.key })).status).toBe(401);
    expect((await t.json("DELETE", "/api/v1/admin/keys/key_nope")).status).toBe(404);
  });
  test("keys are unique and random", async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++)
      keys.add((await t.json("POST", "/api/v1/admin/keys", { body: { accountId: "acc_default", permissions: ["documents"] } })).body.key);
    expect(keys.size).toBe(5);
  });
  test("400 for bad permissions, past expiry; 404 for unknown account", async () => {
    expect(
      (await t.json("POST", "/api/v1/admin/keys", { body: { accountId: "acc_default", permissions: ["root"] } })).body.errors[0].path,
    ).toStartWith("/permissions");
    expect((await t.json("POST", "/api/v1/admin/keys", { body: { accountId: "acc_default", permissions: [] } })).status).toBe(400);
    const past = await t.json("POST", "/api/v1/admin/keys", {
      body: { accountId: "acc_default", permissions: ["documents"], expiresAt: 1 },
    });
    expect(past.status).toBe(400);
    expect(past.body.errors[0].path).toBe("/expiresAt");
    expect((await t.json("POST", "/api/v1/admin/keys", { body: { accountId: "acc_nope", permissions: ["documents"] } })).status).toBe(404);
  });
});
