/**
 * Migration 0020 on a database that already has events: the events kept are numbered in the order of the
 * old feed (transaction ids), so a cursor the old feed handed out resumes right after its event; events
 * written after the migration come after them; the fan-out starts where 0015's left off.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { connect, type Database } from "../../../src/db/client";
import { decodeEventCursor, readEvents } from "../../../src/modules/events/service";
import { serverUrl } from "../../support/database";

const DRIZZLE = join(import.meta.dir, "../../../drizzle");
const name = `kiln_t_m0020_${Bun.randomUUIDv7().replaceAll("-", "").slice(-12)}`;
let url: string;
let before0020: string;
let database: Database;

/** The migrations folder as it was before 0020. */
function foldersBefore0020(): string {
  const folder = mkdtempSync(join(tmpdir(), "kiln-m0019-"));
  cpSync(DRIZZLE, folder, { recursive: true });
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8"));
  journal.entries = journal.entries.filter((entry: { idx: number }) => entry.idx < 20);
  writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify(journal));
  return folder;
}

beforeAll(async () => {
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const parsed = new URL(serverUrl());
  parsed.pathname = `/${name}`;
  url = parsed.toString();
  before0020 = foldersBefore0020();
});
afterAll(async () => {
  await database?.close();
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  rmSync(before0020, { recursive: true, force: true });
});

const insertEvent = (sql: postgres.Sql | postgres.ReservedSql, id: string) =>
  sql`insert into events (id, account_id, type, folder, data, created_at)
      values (${id}, 'acc_m', 'pipeline.created', null, ${JSON.stringify({ pipeline: { id } })}::jsonb, 1) returning tx::text, seq::text`;

test("events kept before the migration keep the old feed's order, old cursors resume after their event, the fan-out starts where it was", async () => {
  const sql = postgres(url, { max: 3, onnotice: () => {} });
  await migrate(drizzle(sql), { migrationsFolder: before0020 });
  // as the old feed saw them: `older` takes its transaction id first and commits last
  const [first] = await insertEvent(sql, "evt_first");
  const older = await sql.reserve();
  await older`begin`;
  await older`select pg_current_xact_id()`;
  const [younger] = await insertEvent(sql, "evt_younger");
  const [late] = await insertEvent(older, "evt_older");
  await older`commit`;
  older.release();
  // the old fan-out had made the deliveries of the transactions below its horizon, up to `younger`'s
  await sql`update webhook_fanout set horizon = ${Number(younger!.tx) + 1}`;
  expect(Number(late!.seq)).toBeGreaterThan(Number(younger!.seq));
  expect(Number(late!.tx)).toBeLessThan(Number(younger!.tx));

  await migrate(drizzle(sql), { migrationsFolder: DRIZZLE });
  await insertEvent(sql, "evt_after");
  database = connect(url);
  const ids = async (after: string) =>
    (await readEvents(database.db, "acc_m", ["pipeline"], {}, decodeEventCursor(after), 100)).map((event) => event.id);

  // the old feed's order: by transaction id
  expect(await ids("")).toEqual(["evt_first", "evt_older", "evt_younger", "evt_after"]);
  expect(await ids(`${first!.tx}-${first!.seq}`)).toEqual(["evt_older", "evt_younger", "evt_after"]);
  expect(await ids(`${late!.tx}-${late!.seq}`)).toEqual(["evt_younger", "evt_after"]);
  expect(await ids(`${younger!.tx}-${younger!.seq}`)).toEqual(["evt_after"]);
  // the fan-out: every commit below the old horizon is done, the later ones are not
  const [cursor] = await sql`select fanned_seq::int, fanned_event::int from webhook_fanout_cursors where account_id = 'acc_m'`;
  expect(cursor).toEqual({ fanned_seq: 3, fanned_event: 0 });
  const [counter] = await sql`select last_seq::int from account_event_sequences where account_id = 'acc_m'`;
  expect(counter).toEqual({ last_seq: 4 });
  await sql.end();
});
