/**
 * src/db/client.ts: the bounds of every pool connection (a lock, a statement, a free connection), each
 * an error that src/core/errors.ts reads as a timeout (503 database_busy), the pool's stall that /health
 * reports, and the pool guard that tests/support/setup.ts turns on for every test.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql as drizzleSql } from "drizzle-orm";
import { CONNECTION_LIMITS_DEFAULT } from "../../src/config";
import { isDatabaseTimeout } from "../../src/core/errors";
import { connect, type Database } from "../../src/db/client";
import { PoolRequestInTransaction } from "../../src/db/pool-guard";
import { createTestDatabase, type TestDatabase } from "../support/database";

let testDb: TestDatabase;
let small: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  small = connect(testDb.url, {
    poolMax: 1,
    limits: { lockTimeoutMs: 200, statementTimeoutMs: 300, idleInTransactionTimeoutMs: 0, acquireTimeoutMs: 300 },
  });
});
afterAll(async () => {
  await small.close();
  await testDb.drop();
});

const failure = (query: Promise<unknown>) =>
  query.then(
    () => undefined,
    (error: unknown) => error,
  );

test("the pool guard: a pool query inside a transaction throws, the transaction's own connection does not", async () => {
  const { db } = testDb.database;
  const inside = await db.transaction(async (tx) => {
    await tx.execute(drizzleSql`select 1`);
    return failure(db.execute(drizzleSql`select 1`));
  });
  // Drizzle wraps it in its own query error
  expect((inside as Error).cause).toBeInstanceOf(PoolRequestInTransaction);
  expect(await failure(testDb.database.sql.begin(() => testDb.database.sql`select 1`))).toBeInstanceOf(PoolRequestInTransaction);
  // work a transaction started may go on with the pool once it has ended
  let later: Promise<unknown> = Promise.resolve();
  await db.transaction(async () => {
    later = Bun.sleep(20).then(() => db.execute(drizzleSql`select 1`));
  });
  expect(await failure(later)).toBeUndefined();
});

test("a query waits at most the acquire timeout for a free connection; the stall shows until one comes free", async () => {
  let release!: () => void;
  const held = small.sql.begin(async (tx) => {
    await tx`select 1`;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await Bun.sleep(50);
  const started = performance.now();
  const error = await failure(small.sql`select 1`);
  const waited = performance.now() - started;
  const stalledMs = small.stalledForMs();
  release();
  await held;
  expect((error as { code?: string }).code).toBe("ACQUIRE_TIMEOUT");
  expect(isDatabaseTimeout(error)).toBe(true);
  expect(waited).toBeLessThan(3_000);
  expect(stalledMs).toBeGreaterThan(200);
  expect((await small.sql`select 2 as n`)[0].n).toBe(2);
  expect(small.stalledForMs()).toBe(0);
});

test("a statement past the statement timeout and a lock not granted within the lock timeout are timeouts", async () => {
  const statement = await failure(small.sql`select pg_sleep(5)`);
  expect((statement as { code?: string }).code).toBe("57014");
  expect(isDatabaseTimeout(statement)).toBe(true);

  await testDb.database.sql`create table if not exists lock_probe (id int primary key)`;
  await testDb.database.sql`insert into lock_probe values (1) on conflict do nothing`;
  let release!: () => void;
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holder = testDb.database.sql.begin(async (tx) => {
    await tx`select * from lock_probe where id = 1 for update`;
    locked();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await isLocked;
  const lock = await failure(small.sql`update lock_probe set id = 1 where id = 1`);
  release();
  await holder;
  expect((lock as { code?: string }).code).toBe("55P03");
  expect(isDatabaseTimeout(lock)).toBe(true);
});

test("the defaults bound every connection", async () => {
  const [settings] = await testDb.database.sql`select current_setting('lock_timeout') as lock,
    current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle`;
  expect(settings).toEqual({
    lock: `${CONNECTION_LIMITS_DEFAULT.lockTimeoutMs / 1000}s`,
    statement: `${CONNECTION_LIMITS_DEFAULT.statementTimeoutMs / 1000}s`,
    idle: `${CONNECTION_LIMITS_DEFAULT.idleInTransactionTimeoutMs / 1000}s`,
  });
});

test("a transaction idle past the idle-in-transaction timeout loses its connection; the pool goes on", async () => {
  const idle = connect(testDb.url, {
    poolMax: 1,
    limits: { lockTimeoutMs: 0, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 200, acquireTimeoutMs: 1_000 },
  });
  try {
    const error = await failure(
      idle.sql.begin(async (tx) => {
        await tx`select 1`;
        await Bun.sleep(600);
        await tx`select 2`;
      }),
    );
    expect((error as { code?: string }).code).toBe("CONNECTION_CLOSED");
    expect((await idle.sql`select 3 as n`)[0].n).toBe(3);
  } finally {
    await idle.close();
  }
});
