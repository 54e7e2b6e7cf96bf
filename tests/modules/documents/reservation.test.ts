/**
 * The storage reservation is the last write of a create and of a new version (drizzle/0018): these call
 * the repository directly, past the service's pre-check, so the reservation itself is what refuses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentsRepository, type NewDocumentRow } from "../../../src/modules/documents/repository";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let repository: ReturnType<typeof documentsRepository>;
beforeAll(async () => {
  t = await createTestApp();
  repository = documentsRepository(t.testDb.database.db);
});
afterAll(async () => {
  await t.close();
});

const newDocument = (accountId: string, size: number, folder: string | null = null): NewDocumentRow => {
  const id = `doc_${Bun.randomUUIDv7()}`;
  return {
    id,
    accountId,
    name: id,
    description: null,
    tags: [],
    folder,
    fileSize: size,
    contentHash: "0".repeat(64),
    contentKey: `reservation/${id}`,
    createdAt: Date.now(),
    updatedAt: Date.now(),
  };
};

/** What the account holds, as the database has it. */
async function holdings(accountId: string) {
  const { sql } = t.testDb.database;
  const [row] = await sql`
    select (select storage_used_bytes::int from accounts where id = ${accountId}) as used,
      (select count(*)::int from documents where account_id = ${accountId}) as documents,
      (select count(*)::int from document_versions v join documents d on d.id = v.document_id where d.account_id = ${accountId}) as versions,
      (select count(*)::int from folders where account_id = ${accountId}) as folders,
      (select count(*)::int from events where account_id = ${accountId}) as events`;
  return row;
}

describe("a create's reservation", () => {
  test("refused over the storage limit or the document maximum, it leaves no document, version, folder or event", async () => {
    const { accountId } = await t.newAccount({ storageLimitBytes: 100, maxDocumentBytes: 60 });
    expect(await repository.create(newDocument(accountId, 50))).toMatchObject({ outcome: "stored" });
    const before = await holdings(accountId);
    expect(before).toEqual({ used: 50, documents: 1, versions: 1, folders: 0, events: 1 });
    expect(await repository.create(newDocument(accountId, 60, "new/folder"))).toEqual({ outcome: "storage_limit_exceeded" });
    expect(await repository.create(newDocument(accountId, 61, "new/folder"))).toEqual({ outcome: "document_too_large" });
    expect(await holdings(accountId)).toEqual(before);
  });

  test("concurrent creates: exactly those that fit are stored, each with its event, and usage is their sum", async () => {
    const { accountId } = await t.newAccount({ storageLimitBytes: 55 });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => repository.create(newDocument(accountId, 10, `f${i % 3}`)).then((result) => result.outcome)),
    );
    expect(outcomes.filter((outcome) => outcome === "stored").length).toBe(5);
    expect(outcomes.filter((outcome) => outcome === "storage_limit_exceeded").length).toBe(15);
    const held = await holdings(accountId);
    expect(held).toMatchObject({ used: 50, documents: 5, versions: 5, events: 5 });
    const { sql } = t.testDb.database;
    const counted = await sql`select coalesce(sum(document_count), 0)::int as n from folders where account_id = ${accountId}`;
    expect(counted[0].n).toBe(5);
  });
});

describe("a new version's reservation", () => {
  test("refused, it leaves the document, its versions, the usage and the events as they were", async () => {
    const { accountId } = await t.newAccount({ storageLimitBytes: 100, maxDocumentBytes: 80 });
    const document = newDocument(accountId, 40, "kept");
    await repository.create(document);
    const before = await holdings(accountId);
    const version = (size: number) =>
      repository.newVersion({
        accountId,
        documentId: document.id,
        acceptedHashes: null,
        size,
        hash: "1".repeat(64),
        key: `v/${size}`,
        now: Date.now(),
      });
    expect(await version(70)).toEqual({ outcome: "storage_limit_exceeded" });
    expect(await version(81)).toEqual({ outcome: "document_too_large" });
    expect(await holdings(accountId)).toEqual(before);
    const [row] = await t.testDb.database.sql`select content_version, file_size::int from documents where id = ${document.id}`;
    expect(row).toEqual({ content_version: 1, file_size: 40 });
    expect(await version(60)).toMatchObject({ outcome: "stored", document: { contentVersion: 2, fileSize: 60 } });
    expect(await holdings(accountId)).toMatchObject({ used: 100, versions: 2, events: before.events + 1 });
  });
});
