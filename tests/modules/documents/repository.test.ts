import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, desc, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import { documents } from "../../../src/db/schema";
import { createAccount } from "../../../src/modules/admin/service";
import { documentsRepository } from "../../../src/modules/documents/repository";
import { createTestDatabase, type TestDatabase } from "../../support/database";

let testDb: TestDatabase;
let accountId: string;
let otherAccountId: string;

const awkwardTags = [["a,b", 'say "hi"', "{braces}", "back\\slash", "NULL", "", "é ✓"], [], ["one"]];

beforeAll(async () => {
  testDb = await createTestDatabase();
  const { db } = testDb.database;
  accountId = (await createAccount(db, { name: "rows" })).id;
  otherAccountId = (await createAccount(db, { name: "other" })).id;
  const base = 1_732_400_000_000;
  await db.insert(documents).values(
    Array.from({ length: 12 }, (_, i) => ({
      id: `doc_row_${String(i).padStart(2, "0")}`,
      accountId,
      name: `document ${i}`,
      description: i % 3 === 0 ? null : `described ${i}`,
      tags: awkwardTags[i % awkwardTags.length],
      folder: i % 2 === 0 ? null : "reports/2026",
      fileSize: i === 5 ? 2 ** 50 + 3 : 100 + i,
      contentHash: `hash${i}`,
      contentKey: `key${i}`,
      revision: i + 1,
      contentVersion: 1 + (i % 4),
      // two documents share a creation time: the cursor must break the tie by id
      createdAt: base + (i === 7 ? 6 : i),
      updatedAt: base + 100 + i,
      deletedAt: i >= 9 ? base + 200 + i : null,
      purgeAt: i >= 9 ? base + 300 + i : null,
    })),
  );
});

afterAll(() => testDb.drop());

/** The rows as Drizzle's own query builder reads them: what the repository's direct reads must equal. */
function drizzlePage(deleted: boolean, limit: number, after?: { createdAt: number; id: string }) {
  const { db } = testDb.database;
  const cursor =
    after && or(lt(documents.createdAt, after.createdAt), and(eq(documents.createdAt, after.createdAt), lt(documents.id, after.id)));
  return db
    .select()
    .from(documents)
    .where(and(eq(documents.accountId, accountId), deleted ? isNotNull(documents.deletedAt) : isNull(documents.deletedAt), cursor))
    .orderBy(desc(documents.createdAt), desc(documents.id))
    .limit(limit);
}

describe("documents read straight from postgres.js", () => {
  test("a document by id is the row Drizzle reads, field for field and type for type", async () => {
    const repository = documentsRepository(testDb.database.db);
    const { db } = testDb.database;
    for (const id of ["doc_row_00", "doc_row_01", "doc_row_05", "doc_row_07"]) {
      const [expected] = await db.select().from(documents).where(eq(documents.id, id));
      const row = await repository.findActive(accountId, id);
      expect(row).toEqual(expected);
      expect(Object.keys(row!).sort()).toEqual(Object.keys(expected).sort());
    }
    expect((await repository.findActive(accountId, "doc_row_05"))!.fileSize).toBe(2 ** 50 + 3);
  });

  test("deleted documents, other accounts' documents and unknown ids are not found", async () => {
    const repository = documentsRepository(testDb.database.db);
    expect(await repository.findActive(accountId, "doc_row_10")).toBeUndefined();
    expect(await repository.findActive(otherAccountId, "doc_row_01")).toBeUndefined();
    expect(await repository.findActive(accountId, "doc_row_99")).toBeUndefined();
    expect(await repository.findActive(accountId, "doc_\u0000")).toBeUndefined();
  });

  test("first pages, pages after a cursor (a creation-time tie included) and deleted pages are Drizzle's rows in Drizzle's order", async () => {
    const repository = documentsRepository(testDb.database.db);
    for (const deleted of [false, true]) {
      for (const limit of [1, 4, 50]) {
        expect(await repository.list(accountId, { deleted, limit })).toEqual(await drizzlePage(deleted, limit));
      }
    }
    const first = await repository.list(accountId, { deleted: false, limit: 3 });
    expect(first.map((row) => row.id)).toEqual(["doc_row_08", "doc_row_07", "doc_row_06"]);
    const tie = first[1];
    const after = { createdAt: tie.createdAt, id: tie.id };
    const next = await repository.list(accountId, { deleted: false, limit: 4, after });
    expect(next).toEqual(await drizzlePage(false, 4, after));
    expect(next.map((row) => row.id)).toEqual(["doc_row_06", "doc_row_05", "doc_row_04", "doc_row_03"]);
    expect(await repository.list(otherAccountId, { deleted: false, limit: 50 })).toEqual([]);
  });
});
