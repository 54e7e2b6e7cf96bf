/** Helpers of the query tests: run index builds in-process, read an index's entries as a rebuild would write them. */
import { documentsRepository } from "../../../src/modules/documents/repository";
import { buildWaiting } from "../../../src/modules/query/build";
import { IndexSets } from "../../../src/modules/query/indexes";
import { queryRepository } from "../../../src/modules/query/repository";
import { createContentStore } from "../../../src/storage";
import type { TestApp } from "../../support/app";

/** Builds every index waiting, as the background loop would, until none is left. */
export async function buildNow(t: TestApp): Promise<void> {
  const db = t.testDb.database.db;
  const documents = documentsRepository(db);
  const queries = queryRepository(db, documents.folderTotal);
  await buildWaiting({
    queries,
    documents,
    store: createContentStore(t.config),
    sets: new IndexSets(queries.indexSet),
    now: Date.now,
    batch: 50,
    leaseMs: 60_000,
  });
}

/** An index's entries as (hex key, document) pairs, sorted: what a query reads. */
export async function entriesOf(t: TestApp, indexId: string): Promise<string[]> {
  const rows = await t.testDb.database.sql<{ key: Buffer; document_id: string }[]>`
    select key, document_id from index_entries where index_id = ${indexId} order by key, document_id`;
  return rows.map((row) => `${row.key.toString("hex")} ${row.document_id}`);
}

/** Drops an index's entries and builds it again from the stored bytes: the entries every write must leave. */
export async function rebuiltEntries(t: TestApp, indexId: string): Promise<string[]> {
  const sql = t.testDb.database.sql;
  await sql`delete from index_entries where index_id = ${indexId}`;
  await sql`update indexes set state = 'building', build_cursor = null, processed = 0, lease_until = null where id = ${indexId}`;
  await buildNow(t);
  return entriesOf(t, indexId);
}
