/**
 * kiln_record_event is the definition of an event row. kiln_create, kiln_new_version and the documents
 * trigger (kiln_document_events) write theirs inline, for speed: each of their rows must be the row
 * kiln_record_event writes for the same change (every column but the row's own id, seq and tx; and but
 * created_at for the trigger, which reads the clock), so a column added to one and not the others fails here.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestDatabase, type TestDatabase } from "../support/database";

let testDb: TestDatabase;
const ACCOUNT = "acc_writer";
beforeAll(async () => {
  testDb = await createTestDatabase();
  await testDb.database.sql`insert into accounts (id, name, plan, created_at) values (${ACCOUNT}, 'writer', 'free', 0)`;
});
afterAll(async () => {
  await testDb.drop();
});

type Row = Record<string, unknown>;

const lastEvent = async (): Promise<Row> => {
  const [row] = await testDb.database.sql`select * from events order by seq desc limit 1`;
  const { id: _id, seq: _seq, tx: _tx, ...rest } = row!;
  return rest;
};

const documentRow = async (id: string): Promise<string> => {
  const [row] = await testDb.database.sql`select to_jsonb(d)::text as row from documents d where id = ${id}`;
  return row!.row as string;
};

/** The row kiln_record_event writes for this document event. */
async function recorded(type: string, document: string, createdAt: number): Promise<Row> {
  const [{ folder }] = await testDb.database.sql`select (${document}::jsonb ->> 'folder') as folder`;
  await testDb.database.sql`select kiln_record_event(${ACCOUNT}, ${type}, ${folder}, null,
    jsonb_populate_record(null::documents, ${document}::jsonb), ${createdAt})`;
  return lastEvent();
}

const withoutClock = ({ created_at: _createdAt, ...rest }: Row) => rest;

test("kiln_create's document.created is kiln_record_event's row", async () => {
  await testDb.database.sql`select kiln_create(${ACCOUNT}, 12, 1000, ${["a", "a/b"]}::text[], 'doc_w1', 'one', 'about',
    ${["x", "y"]}::text[], 'a/b', 'h1', 'k1', 1001, '{}', '{}', '{}', false)`;
  const written = await lastEvent();
  expect(written.type).toBe("document.created");
  expect(written).toEqual(await recorded("document.created", await documentRow("doc_w1"), 1001));
});

test("kiln_new_version's document.content_replaced is kiln_record_event's row", async () => {
  const [{ result }] = await testDb.database
    .sql`select kiln_new_version(${ACCOUNT}, 'doc_w1', null, 30, 'h2', 'k2', 2000, null, '{}', '{}', '{}', false) as result`;
  expect((result as { outcome: string }).outcome).toBe("stored");
  const written = await lastEvent();
  expect(written.type).toBe("document.content_replaced");
  expect(written).toEqual(await recorded("document.content_replaced", await documentRow("doc_w1"), 2000));
});

test("the documents trigger's events (updated, deleted, restored, purged) are kiln_record_event's rows", async () => {
  const changes: [string, string][] = [
    ["document.updated", "update documents set name = 'renamed', folder = 'a', updated_at = 3000 where id = 'doc_w1'"],
    ["document.deleted", "update documents set deleted_at = 4000, purge_at = 5000 where id = 'doc_w1'"],
    ["document.restored", "update documents set deleted_at = null, purge_at = null where id = 'doc_w1'"],
  ];
  for (const [type, change] of changes) {
    await testDb.database.sql.unsafe(change);
    const written = await lastEvent();
    expect(written.type).toBe(type);
    expect(withoutClock(written)).toEqual(withoutClock(await recorded(type, await documentRow("doc_w1"), 0)));
  }
  await testDb.database.sql`update documents set deleted_at = 6000, purge_at = 7000 where id = 'doc_w1'`;
  const before = await documentRow("doc_w1");
  await testDb.database.sql`delete from documents where id = 'doc_w1'`;
  const written = await lastEvent();
  expect(written.type).toBe("document.purged");
  expect(withoutClock(written)).toEqual(withoutClock(await recorded("document.purged", before, 0)));
});
