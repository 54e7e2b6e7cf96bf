import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { PoolRequestInTransaction } from "../../src/db/pool-guard";
import { accounts, documents, documentVersions } from "../../src/db/schema";
import { run, statement } from "../../src/db/statement";
import { createAccount } from "../../src/modules/admin/service";
import { documentsRepository } from "../../src/modules/documents/repository";
import { createTestDatabase, type TestDatabase } from "../support/database";

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.drop());

const ADD = statement<[a: number, b: number], { sum: number }>("select ($1::int + $2::int) as sum");
const NONE = statement<[at: number], never>("delete from documents where created_at < $1 and false");

test("run gives the rows and the count, on the pool and on a transaction's own connection", async () => {
  const { db } = testDb.database;
  const rows = await run(db, ADD, [2, 3]);
  expect([...rows]).toEqual([{ sum: 5 }]);
  expect((await run(db, NONE, [0])).count).toBe(0);
  expect(await db.$client.begin(async (tx) => (await run(tx, ADD, [4, 5]))[0].sum)).toBe(9);
  // the pool inside a transaction is refused (the guard tests/support/setup.ts enables)
  await expect(db.$client.begin(() => run(db, ADD, [1, 1]))).rejects.toBeInstanceOf(PoolRequestInTransaction);
});

test("a purge and its hook commit together: a failing hook leaves the document in the trash", async () => {
  const { db } = testDb.database;
  const accountId = (await createAccount(db, { name: "purge hook" })).id;
  const at = 1_700_000_000_000;
  const row = { accountId, name: "n", tags: [], fileSize: 3, contentHash: "h", createdAt: at, updatedAt: at, deletedAt: at, purgeAt: at };
  await db.insert(documents).values({ ...row, id: "doc_hook", contentKey: "key_hook" });
  await db
    .insert(documentVersions)
    .values({ documentId: "doc_hook", version: 1, fileSize: 3, contentHash: "h", contentKey: "key_hook", createdAt: at });
  await db.update(accounts).set({ storageUsedBytes: 3 }).where(eq(accounts.id, accountId)); // as a create would have reserved
  const failing = documentsRepository(db, async () => {
    throw new Error("hook failed");
  });
  await expect(failing.purge(accountId, "doc_hook")).rejects.toThrow("hook failed");
  expect(await db.select({ id: documents.id }).from(documents).where(eq(documents.id, "doc_hook"))).toHaveLength(1);
  const seen: unknown[] = [];
  const recording = documentsRepository(db, async (_tx, purged) => {
    seen.push(purged.accountIds, purged.documentIds);
  });
  expect(await recording.purge(accountId, "doc_hook")).toEqual(["key_hook"]);
  expect(seen).toEqual([[accountId], ["doc_hook"]]);
  const [account] = await db.select({ used: accounts.storageUsedBytes }).from(accounts).where(eq(accounts.id, accountId));
  expect(account.used).toBe(0);
  expect(await db.select({ id: documents.id }).from(documents).where(eq(documents.id, "doc_hook"))).toHaveLength(0);
});
