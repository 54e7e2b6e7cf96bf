/** Helpers of the query tests: run index builds (jobs of kind indexBuild) in-process, read an index's entries as a rebuild would write them. */

import type { TestApp } from "../../support/app";
import { runnerOf } from "../jobs/support";

/** Runs the job runner until no index build is left queued or running, as every node's runner would. */
export async function buildNow(t: TestApp): Promise<void> {
  const sql = t.testDb.database.sql;
  const runner = runnerOf(t, { pollMs: 20 });
  try {
    for (;;) {
      const [{ left }] = await sql<{ left: number }[]>`
        select count(*)::int as "left" from jobs where kind = 'indexBuild' and state in ('queued', 'running', 'cancelling')`;
      if (left === 0) return;
      await Bun.sleep(20);
    }
  } finally {
    await runner.stop();
  }
}

/** An index's entries as (hex key, document) pairs, sorted: what a query reads. */
export async function entriesOf(t: TestApp, indexId: string): Promise<string[]> {
  const rows = await t.testDb.database.sql<{ key: Buffer; document_id: string }[]>`
    select key, document_id from index_entries where index_id = ${indexId} order by key, document_id`;
  return rows.map((row) => `${row.key.toString("hex")} ${row.document_id}`);
}

/**
 * Drops an index's entries and builds it again from the stored bytes (a new build job over the folder's
 * documents): the entries every write must leave.
 */
export async function rebuiltEntries(t: TestApp, indexId: string): Promise<string[]> {
  const sql = t.testDb.database.sql;
  const [index] = await sql<{ account_id: string; folder: string }[]>`select account_id, folder from indexes where id = ${indexId}`;
  await sql`delete from index_entries where index_id = ${indexId}`;
  await sql`update indexes set state = 'building', processed = 0 where id = ${indexId}`;
  const { indexBuildJobs } = await import("../../../src/modules/query/build");
  const builds = indexBuildJobs({ database: t.testDb.database, now: Date.now });
  const ids = await sql<{ id: string }[]>`
    select id from documents where account_id = ${index!.account_id} and deleted_at is null
      and (folder = ${index!.folder} or starts_with(folder, ${`${index!.folder}/`})) order by created_at, id`;
  if (ids.length === 0) await sql`update indexes set state = 'ready' where id = ${indexId}`;
  else {
    await sql.begin((tx) =>
      builds.start(
        tx,
        { id: indexId, accountId: index!.account_id },
        ids.map((row) => row.id),
      ),
    );
    await buildNow(t);
  }
  return entriesOf(t, indexId);
}
