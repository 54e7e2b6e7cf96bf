/** A fresh, migrated database per test file, dropped afterwards. */
import postgres from "postgres";
import { connect, type Database, runMigrations } from "../../src/db/client";

export function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL ?? process.env.KILN_TEST_SERVER_URL;
  if (!url) throw new Error("tests/support/setup.ts did not run (bunfig.toml preload)");
  return url;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  database: Database;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  const name = `kiln_t_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const url = withDatabase(serverUrl(), name);
  await runMigrations(url);
  const database = connect(url);
  let dropped = false;
  return {
    url,
    name,
    database,
    async drop() {
      if (dropped) return;
      dropped = true;
      await database.close().catch(() => {});
      const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}
