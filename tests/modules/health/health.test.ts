import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test("health, openapi and docs need no key", async () => {
  expect((await t.json("GET", "/health", { key: null })).body).toEqual({ success: true, status: "ok" });
  const spec = await t.json("GET", "/openapi.json", { key: null });
  expect(spec.status).toBe(200);
  expect(spec.body.openapi).toStartWith("3.");
  expect(spec.body.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  expect(Object.keys(spec.body.paths)).toEqual(expect.arrayContaining(["/api/v1/usage", "/api/v1/admin/accounts", "/api/v1/admin/keys"]));
  const docs = await t.request("GET", "/docs", { key: null });
  expect(docs.status).toBe(200);
  expect(docs.headers.get("content-type")).toContain("text/html");
});

test("ready is 200 while the database answers and 503 once it does not", async () => {
  const other = await (await import("../../support/app")).createTestApp();
  expect((await other.json("GET", "/ready", { key: null })).status).toBe(200);
  await other.testDb.database.close();
  const res = await other.json("GET", "/ready", { key: null });
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: "not_ready", status: 503 });
  await other.close();
});

test("ready is 503 while the content store cannot be used, and 200 again once it can", async () => {
  const content = join(t.config.dataDir, "content");
  rmSync(content, { recursive: true, force: true });
  writeFileSync(content, "a file where the content folder should be");
  const res = await t.json("GET", "/ready", { key: null });
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: "not_ready", detail: "The content store does not answer" });
  rmSync(content);
  expect((await t.json("GET", "/ready", { key: null })).status).toBe(200);
});

test("health is 503 database_pool_stalled while queries wait past DATABASE_STALLED_HEALTH_MS with no connection coming free, 200 again once one does", async () => {
  const other = await createTestApp({ DATABASE_STALLED_HEALTH_MS: "1000" });
  const { sql } = other.testDb.database;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  // every connection of the pool held by a transaction that waits
  const holders = Array.from({ length: sql.options.max }, () =>
    sql.begin(async (tx) => {
      await tx`select 1`;
      await released;
    }),
  );
  await Bun.sleep(200);
  const waiting = sql`select 1`.then((rows) => rows); // a query runs once awaited
  expect((await other.json("GET", "/health", { key: null })).status).toBe(200);
  await Bun.sleep(1_100);
  const stalled = await other.json("GET", "/health", { key: null });
  expect(stalled.status).toBe(503);
  expect(stalled.body).toMatchObject({ code: "database_pool_stalled", status: 503 });
  release();
  await Promise.all([...holders, waiting]);
  expect((await other.json("GET", "/health", { key: null })).body).toEqual({ success: true, status: "ok" });
  await other.close();
});
