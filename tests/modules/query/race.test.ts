/**
 * An index declared while writes go on misses none of them (each write checks, under the account row
 * lock, that its entries were computed for the account's current indexes), and a cursor is bound to its
 * account and its index.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { buildNow, entriesOf, rebuiltEntries } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test("writes racing an index's creation and build: every document has its entries, equal to a rebuild", async () => {
  const { key } = await t.newAccount();
  const create = (i: number) => t.json("POST", "/api/v1/documents", { key, body: { name: `r${i}`, folder: "race", content: { n: i } } });
  const seeded = await Promise.all(Array.from({ length: 20 }, (_, i) => create(i)));
  // four lanes of writes go on while the index is declared and its build runs to the end, once
  const lane = async (from: number) => {
    for (let i = from; i < from + 15; i++) {
      expect((await create(i)).status).toBe(201);
      const doc = seeded[i % seeded.length].body.document;
      expect((await t.json("PUT", `/api/v1/documents/${doc.id}/content`, { key, body: { n: 1_000 + i } })).status).toBe(200);
    }
  };
  const lanes = Promise.all([20, 35, 50, 65].map(lane));
  await Bun.sleep(20);
  const made = await t.json("POST", "/api/v1/indexes", { key, body: { folder: "race", fields: [{ path: "/n" }] } });
  expect(made.status).toBe(202);
  await buildNow(t);
  await lanes;
  const entries = await entriesOf(t, made.body.index.id);
  expect(new Set(entries.map((entry) => entry.split(" ")[1])).size).toBe(80);
  expect(await rebuiltEntries(t, made.body.index.id)).toEqual(entries);
});

test("a cursor is refused by another account and by a query another index serves", async () => {
  const { key } = await t.newAccount();
  const other = await t.newAccount();
  await t.json("POST", "/api/v1/indexes", { key, body: { folder: "c", fields: [{ path: "/n" }] } });
  await t.json("POST", "/api/v1/indexes", { key, body: { folder: "c", fields: [{ path: "/m" }] } });
  await t.json("POST", "/api/v1/indexes", { key: other.key, body: { folder: "c", fields: [{ path: "/n" }] } });
  for (let i = 0; i < 3; i++) await t.json("POST", "/api/v1/documents", { key, body: { name: "d", folder: "c", content: { n: i, m: i } } });
  const page = await t.json("POST", "/api/v1/documents/query", { key, body: { folder: "c", sort: [{ path: "/n" }], limit: 1 } });
  const cursor = page.body.nextCursor;
  expect(cursor).toEqual(expect.any(String));
  const stolen = await t.json("POST", "/api/v1/documents/query", { key: other.key, body: { folder: "c", sort: [{ path: "/n" }], cursor } });
  expect(stolen.body.code).toBe("invalid_cursor");
  const elsewhere = await t.json("POST", "/api/v1/documents/query", { key, body: { folder: "c", sort: [{ path: "/m" }], cursor } });
  expect(elsewhere.body.code).toBe("invalid_cursor");
});
