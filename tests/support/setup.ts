/**
 * Test-run set-up: one PostgreSQL server for the whole run. With TEST_DATABASE_URL (a server admin URL,
 * e.g. postgres://postgres@127.0.0.1:5432/postgres) that server; otherwise an embedded PostgreSQL started
 * in a temporary folder. Each test file then creates its own database there (tests/support/database.ts).
 */
import { afterAll, setDefaultTimeout } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded";
import { enablePoolGuard } from "../../src/db/pool-guard";

// every test runs with the pool guard: a pool connection requested inside a transaction throws
enablePoolGuard();

// Worker start-up and real-server tests take seconds on a loaded 2-core machine. Bun applies this to
// the first test file of a run only; a whole-suite run gets the same 60 s from `bun run test`'s --timeout.
setDefaultTimeout(60_000);

if (!process.env.TEST_DATABASE_URL && !process.env.KILN_TEST_SERVER_URL) {
  const dir = mkdtempSync(join(tmpdir(), "kiln-test-pg-"));
  chmodSync(dir, 0o755);
  const embedded = await startEmbeddedPostgres(dir);
  process.env.KILN_TEST_SERVER_URL = embedded.url;
  afterAll(async () => {
    await embedded.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
