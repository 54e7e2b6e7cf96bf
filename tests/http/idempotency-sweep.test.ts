/** The idempotency key sweep as background work: it deletes expired keys, one node at a time. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { connect } from "../../src/db/client";
import { LOCKS, withTryAdvisoryLock } from "../../src/db/locks";
import { idempotencySweep } from "../../src/http/idempotency-sweep";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("while another node holds the sweep's lock this node skips its turns; once it is free, the expired keys go", async () => {
  const { accountId } = await t.newAccount();
  const { db } = t.testDb.database;
  await db.execute(sql`insert into idempotency_keys (account_id, key, fingerprint, claim, created_at, expires_at)
    select ${accountId}, 'expired-' || n, 'f', 'c', 0, 1 from generate_series(1, 3) n`);
  const count = async () =>
    (await db.execute<{ count: number }>(sql`select count(*)::int as count from idempotency_keys where account_id = ${accountId}`))[0]
      .count;
  const errors: string[] = [];
  const logger = { log: (level: string, message: string) => level === "error" && errors.push(message) };

  const otherNode = connect(t.testDb.url, { poolMax: 2 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holding = withTryAdvisoryLock(otherNode.sql, LOCKS.idempotencySweep, () => released);
  try {
    await Bun.sleep(100); // the other node has the lock
    const sweep = idempotencySweep({ database: t.testDb.database, intervalMs: 20, logger }).start();
    try {
      await Bun.sleep(300);
      expect(await count()).toBe(3);
      release();
      await holding;
      const deadline = Date.now() + 10_000;
      while ((await count()) > 0 && Date.now() < deadline) await Bun.sleep(25);
      expect(await count()).toBe(0);
    } finally {
      await sweep.stop();
    }
  } finally {
    release();
    await otherNode.close();
  }
  expect(errors).toEqual([]);
});
