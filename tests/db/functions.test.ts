/**
 * src/db/sql is the current text of the database's logic: one file per function (functions/<name>.sql)
 * and per trigger (triggers/<name>.sql). The migrations are history; this keeps the two equal. A freshly
 * migrated database must have exactly the functions and triggers that have a file, and running a file
 * over it (in a transaction that is rolled back) must leave the definition PostgreSQL prints
 * (pg_get_functiondef, pg_get_triggerdef) as it was: PostgreSQL normalises both sides the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../support/database";

const SQL_DIR = join(import.meta.dir, "../../src/db/sql");
const files = (kind: string) =>
  readdirSync(join(SQL_DIR, kind))
    .filter((file) => file.endsWith(".sql"))
    .map((file) => ({ name: basename(file, ".sql"), text: readFileSync(join(SQL_DIR, kind, file), "utf8") }));
const FUNCTION_FILES = files("functions");
const TRIGGER_FILES = files("triggers");

const FUNCTIONS = `
  select p.oid, p.proname as name, pg_get_functiondef(p.oid) as definition
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'public' order by p.proname`;
const TRIGGERS = `
  select t.tgname as name, c.relname as "table", pg_get_triggerdef(t.oid) as definition
  from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and not t.tgisinternal order by t.tgname`;

interface Definition {
  name: string;
  table?: string;
  definition: string;
}

let testDb: TestDatabase;
let functions: Definition[];
let triggers: Definition[];
beforeAll(async () => {
  testDb = await createTestDatabase();
  functions = await testDb.database.sql.unsafe<Definition[]>(FUNCTIONS);
  triggers = await testDb.database.sql.unsafe<Definition[]>(TRIGGERS);
});
afterAll(async () => {
  await testDb.drop();
});

/** What `query` reads after `file` has run, in a transaction that is then rolled back. */
async function afterRunning(before: string | undefined, file: string, query: string): Promise<Definition[]> {
  let read: Definition[] = [];
  await testDb.database.sql
    .begin(async (tx) => {
      if (before) await tx.unsafe(before);
      await tx.unsafe(file).simple();
      read = await tx.unsafe<Definition[]>(query);
      throw new Error("rollback");
    })
    .catch((error: Error) => {
      if (error.message !== "rollback") throw error;
    });
  return read;
}

describe("functions", () => {
  test("every function of a migrated database has a file, and every file a function", () => {
    expect(FUNCTION_FILES.map((file) => file.name).sort()).toEqual(functions.map((f) => f.name));
  });

  for (const file of FUNCTION_FILES) {
    test(`functions/${file.name}.sql is the migrated definition`, async () => {
      const after = await afterRunning(undefined, file.text, FUNCTIONS);
      // a changed signature would add a second function of the name instead of replacing it
      expect(after.map((f) => f.name)).toEqual(functions.map((f) => f.name));
      expect(after.find((f) => f.name === file.name)?.definition).toBe(functions.find((f) => f.name === file.name)!.definition);
    });
  }
});

describe("triggers", () => {
  test("every trigger of a migrated database has a file, and every file a trigger", () => {
    expect(TRIGGER_FILES.map((file) => file.name).sort()).toEqual(triggers.map((t) => t.name));
  });

  for (const file of TRIGGER_FILES) {
    test(`triggers/${file.name}.sql is the migrated definition`, async () => {
      const live = triggers.find((t) => t.name === file.name);
      if (!live) throw new Error(`no trigger ${file.name} in a migrated database`);
      const after = await afterRunning(`drop trigger "${live.name}" on "${live.table}"`, file.text, TRIGGERS);
      expect(after).toEqual(triggers);
    });
  }
});
