/**
 * The fan-out: the delivery loop makes each webhook's deliveries from the events feed (migration 0015),
 * so no event is missed when transactions commit out of order, none is fanned out twice when several
 * nodes run it at once, and only webhooks that existed when the event was written receive it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fanOutEvents } from "../../../src/modules/webhooks/deliver";
import { ACCOUNTS_WITH_WEBHOOKS, CLAIM_DELIVERIES, FAN_OUT } from "../../../src/modules/webhooks/statements";
import { createTestApp, type TestApp } from "../../support/app";
import { allFannedOut, deliveredEvents, eventually, fannedOut, startDeliverer } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
});
afterAll(async () => {
  await t.close();
});

const HOOKS = "/api/v1/webhooks";
const URL = "https://hooks.example.com/kiln";

async function webhookOf(key: string, body: Record<string, unknown> = {}): Promise<string> {
  const created = await t.json("POST", HOOKS, { key, body: { url: URL, ...body } });
  expect(created.status).toBe(201);
  return created.body.webhook.id;
}

describe("the fan-out", () => {
  test("an event whose transaction commits last, with a lower seq than events fanned out before it, is still delivered, and the events committed meanwhile are not held back", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const webhookId = await webhookOf(key);
    const older = await t.testDb.database.sql.reserve();
    const younger = await t.testDb.database.sql.reserve();
    const insertEvent = (sql: typeof older, name: string) =>
      sql`insert into events (id, account_id, type, folder, data, created_at)
          values (${`evt_${name}`}, ${accountId}, 'document.created', null, ${JSON.stringify({ name })}::jsonb, ${Date.now()}) returning seq`;
    try {
      // older takes its transaction id first; younger then writes its event (a lower seq) and stays open,
      // while older writes its event (a higher seq) and commits: its event is fanned out before younger's
      await older`begin`;
      await older`select pg_current_xact_id()`;
      await younger`begin`;
      await younger`select pg_current_xact_id()`;
      const [youngerEvent] = await insertEvent(younger, `${accountId}-younger`);
      const [olderEvent] = await insertEvent(older, `${accountId}-older`);
      expect(Number(youngerEvent!.seq)).toBeLessThan(Number(olderEvent!.seq));
      await older`commit`;
      expect(await fannedOut(t, webhookId, 1)).toEqual([`evt_${accountId}-older`]);
      // more runs while younger is open, as a busy server makes them
      for (let run = 0; run < 5; run++) {
        expect((await t.json("POST", "/api/v1/documents", { key, body: { name: `between-${run}`, content: run } })).status).toBe(201);
        await fanOutEvents(t.testDb.database, t.config.webhooks);
      }
      // the account's commits after older's are fanned out at once: nothing waits for younger
      expect(await deliveredEvents(t, webhookId)).toHaveLength(6);
      expect(await deliveredEvents(t, webhookId)).not.toContain(`evt_${accountId}-younger`);
      await younger`commit`;
      const delivered = await fannedOut(t, webhookId, 7);
      expect(delivered).toContain(`evt_${accountId}-younger`);
      expect(delivered).toHaveLength(7);
      expect(new Set(delivered).size).toBe(7);
    } finally {
      await older`rollback`.catch(() => {});
      await younger`rollback`.catch(() => {});
      older.release();
      younger.release();
    }
  });

  test("runs on several nodes at once make one delivery per webhook and event", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const webhooks = [await webhookOf(key), await webhookOf(key, { eventTypes: ["document.created"] })];
    const fanning = { on: true };
    const nodes = Array.from({ length: 4 }, async () => {
      while (fanning.on) await fanOutEvents(t.testDb.database, t.config.webhooks);
    });
    const writes = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        t.json("POST", "/api/v1/documents", { key, body: { name: `doc-${index}`, content: index } }),
      ),
    );
    expect(writes.every((write) => write.status === 201)).toBe(true);
    const [first, second] = [await fannedOut(t, webhooks[0]!, 60), await fannedOut(t, webhooks[1]!, 60)];
    fanning.on = false;
    await Promise.all(nodes);
    expect(first).toHaveLength(60);
    expect(new Set(first).size).toBe(60);
    expect(second).toEqual(first);
  });

  test("a webhook receives the events written after it was made, while it is enabled", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const early = await webhookOf(key);
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "before", content: 1 } })).status).toBe(201);
    await Bun.sleep(5);
    const late = await webhookOf(key);
    const off = await webhookOf(key, { enabled: false });
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "after", content: 2 } })).status).toBe(201);
    const all = await fannedOut(t, early, 2);
    expect(all).toHaveLength(2);
    expect(await deliveredEvents(t, late)).toEqual([all[1]!]);
    expect(await deliveredEvents(t, off)).toEqual([]);
  });

  test("once every event is fanned out, runs on a quiet database neither lock nor write the cursor", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const webhookId = await webhookOf(key);
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "last", content: 1 } })).status).toBe(201);
    await fannedOut(t, webhookId, 1);
    // xmin changes with an update, xmax with a row lock
    const cursorRow = async () => (await t.testDb.database.sql`select xmin::text, xmax::text, * from webhook_fanout`)[0];
    const settled = await eventually(async () => {
      const before = await cursorRow();
      await fanOutEvents(t.testDb.database, t.config.webhooks);
      const after = await cursorRow();
      return JSON.stringify(after) === JSON.stringify(before) ? after : undefined;
    });
    for (let run = 0; run < 5; run++)
      expect(await fanOutEvents(t.testDb.database, t.config.webhooks)).toEqual({ made: 0, oldest: null, more: false });
    expect(await cursorRow()).toEqual(settled);
    // and the next event is fanned out as usual
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "next", content: 2 } })).status).toBe(201);
    expect(await fannedOut(t, webhookId, 2)).toHaveLength(2);
  });

  test("one account's backlog across many webhooks takes many bounded turns; another account's event is fanned out within one", async () => {
    const a = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const b = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hooksA = [];
    for (let index = 0; index < 20; index++) hooksA.push(await webhookOf(a.key));
    const hookB = await webhookOf(b.key);
    // whatever the other tests left is fanned out first
    await allFannedOut(t);
    // A's backlog: 300 events (an import's worth, in one transaction), committed before B's event
    await t.testDb.database.sql`
      insert into events (id, account_id, type, folder, data, created_at)
      select 'evt_backlog_' || n, ${a.accountId}, 'document.created', null, '{}'::jsonb, ${Date.now()}
      from generate_series(1, 300) n`;
    expect((await t.json("POST", "/api/v1/documents", { key: b.key, body: { name: "b", content: 1 } })).status).toBe(201);
    const limits = { fanoutAccounts: 1, fanoutDeliveries: 100 };
    const made: number[] = [];
    // one account a turn: A and B take turns, the one fanned out longest ago first
    for (let turn = 0; turn < 2; turn++) made.push((await fanOutEvents(t.testDb.database, limits)).made);
    expect(await deliveredEvents(t, hookB)).toHaveLength(1);
    for (;;) {
      const turn = await fanOutEvents(t.testDb.database, limits);
      if (turn.oldest === null) break;
      made.push(turn.made);
    }
    // 100 deliveries a turn at most (5 events of 20 webhooks), so A's 6,000 take 60 turns
    expect(Math.max(...made)).toBeLessThanOrEqual(100);
    expect(made.reduce((sum, count) => sum + count, 0)).toBe(6000 + 1);
    for (const hook of hooksA) expect(await deliveredEvents(t, hook)).toHaveLength(300);
  });

  test("a turn given candidate accounts looks at those alone, and says whether they have commits left", async () => {
    const a = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const b = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const [hookA, hookB] = [await webhookOf(a.key), await webhookOf(b.key)];
    await allFannedOut(t);
    // committed without a notification, as a job's documents or the purge sweep are
    const { sql } = t.testDb.database;
    await sql`insert into events (id, account_id, type, folder, data, created_at)
      select 'evt_candidate_' || n, ${a.accountId}, 'document.created', null, '{}'::jsonb, ${Date.now()} from generate_series(1, 3) n`;
    await sql`insert into events (id, account_id, type, folder, data, created_at)
      values ('evt_not_candidate', ${b.accountId}, 'document.created', null, '{}'::jsonb, ${Date.now()})`;
    const limits = { fanoutAccounts: 10, fanoutDeliveries: 2 };
    expect(await fanOutEvents(t.testDb.database, limits, [a.accountId])).toMatchObject({ made: 2, more: true });
    expect(await fanOutEvents(t.testDb.database, limits, [a.accountId])).toMatchObject({ made: 1, more: false });
    expect(await fanOutEvents(t.testDb.database, limits, [a.accountId])).toEqual({ made: 0, oldest: null, more: false });
    expect(await deliveredEvents(t, hookA)).toHaveLength(3);
    expect(await deliveredEvents(t, hookB)).toEqual([]);
    // every account: B's commit too
    expect(await fanOutEvents(t.testDb.database, limits)).toMatchObject({ made: 1, more: false });
    expect(await deliveredEvents(t, hookB)).toEqual(["evt_not_candidate"]);
  });

  test("a candidate without an enabled webhook is passed over, with no lock and no write; the next look at every account moves its cursor", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    await allFannedOut(t);
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "no webhook", content: 1 } })).status).toBe(201);
    const { sql } = t.testDb.database;
    // xmin changes with an update, xmax with a row lock
    const lockRow = async () => (await sql`select xmin::text, xmax::text, * from webhook_fanout`)[0];
    const cursor = async () =>
      (await sql`select fanned_seq::text from webhook_fanout_cursors where account_id = ${accountId}`)[0]?.fanned_seq ?? null;
    const [{ lastSeq }] = await sql`select last_seq::text as "lastSeq" from account_event_sequences where account_id = ${accountId}`;
    const [lockBefore, cursorBefore] = [await lockRow(), await cursor()];
    expect(cursorBefore).not.toBe(lastSeq);
    expect(await fanOutEvents(t.testDb.database, t.config.webhooks, [accountId])).toEqual({ made: 0, oldest: null, more: false });
    expect(await lockRow()).toEqual(lockBefore);
    expect(await cursor()).toBe(cursorBefore);
    expect(await fanOutEvents(t.testDb.database, t.config.webhooks)).toMatchObject({ made: 0, more: false });
    expect(await cursor()).toBe(lastSeq);
  });

  test("a turn while another node's turn holds the fan-out looks at nothing (more: null); the next one does", async () => {
    const a = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = await webhookOf(a.key);
    await allFannedOut(t);
    expect((await t.json("POST", "/api/v1/documents", { key: a.key, body: { name: "held", content: 1 } })).status).toBe(201);
    const other = await t.testDb.database.sql.reserve();
    try {
      await other`begin`;
      await other`select 1 from webhook_fanout where id = 1 for update`;
      expect(await fanOutEvents(t.testDb.database, t.config.webhooks, [a.accountId])).toMatchObject({ made: 0, more: null });
      await other`rollback`;
      expect(await fanOutEvents(t.testDb.database, t.config.webhooks, [a.accountId])).toMatchObject({ made: 1, more: false });
      expect(await deliveredEvents(t, hook)).toHaveLength(1);
    } finally {
      await other`rollback`.catch(() => {});
      other.release();
    }
  });

  /** The delivery loop's statements, by kind, each with its candidates (a fan-out's) or its accounts (a lookup's). */
  function countedLoop(options: { concurrency: number; pollMs: number; fullPassMs?: number }) {
    const seen: { kind: "fanOut" | "claim" | "lookup"; at: number; accounts: string[] | null }[] = [];
    const { sql } = t.testDb.database;
    const counted = new Proxy(sql, {
      get(target, property) {
        if (property !== "unsafe") return Reflect.get(target, property);
        return (text: string, parameters?: never[]) => {
          const at = performance.now();
          if (text === FAN_OUT) seen.push({ kind: "fanOut", at, accounts: parameters![2] });
          if (text === CLAIM_DELIVERIES) seen.push({ kind: "claim", at, accounts: null });
          if (text === ACCOUNTS_WITH_WEBHOOKS) seen.push({ kind: "lookup", at, accounts: parameters![0] });
          return target.unsafe(text, parameters);
        };
      },
    });
    const config = { ...t.config.webhooks, concurrency: options.concurrency };
    const deliverer = startDeliverer(t, {
      database: { ...t.testDb.database, sql: counted },
      config,
      pollMs: options.pollMs,
      fullPassMs: options.fullPassMs,
    });
    return { seen, deliverer };
  }

  /** Sends kiln_events for the account, as each write's answer does, every millisecond or so for `ms`. */
  async function storm(accountId: string, ms: number): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < ms) {
      await t.testDb.database.sql`select pg_notify('kiln_events', ${accountId})`;
      await Bun.sleep(1);
    }
    return performance.now() - started;
  }

  test("a storm of notifications wakes the delivery loop for at most one turn per 25 ms, each looking at the notified account alone", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    await webhookOf(key);
    // no attempts (this file's deliveries point at a name that does not resolve here): turns only
    const { seen, deliverer } = countedLoop({ concurrency: 0, pollMs: 60_000 });
    try {
      await eventually(async () => (seen.length > 0 ? true : undefined));
      const before = seen.length;
      const elapsed = await storm(accountId, 500);
      const fanOuts = seen.slice(before).filter((each) => each.kind === "fanOut");
      expect(fanOuts.length).toBeGreaterThan(2);
      expect(fanOuts.length).toBeLessThanOrEqual(Math.ceil(elapsed / 25) + 1);
      // every account's counters at most once a second (the first turn's pass came before the storm)
      expect(fanOuts.filter((each) => each.accounts === null).length).toBeLessThanOrEqual(Math.ceil(elapsed / 1000));
      expect(new Set(fanOuts.filter((each) => each.accounts !== null).map((each) => each.accounts!.join(",")))).toEqual(
        new Set([accountId]),
      );
    } finally {
      await deliverer.stop();
    }
  });

  test("writes of an account without an enabled webhook cost the loop no fan-out and no claim: a lookup and a claim at most once a second", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    await webhookOf(key, { enabled: false });
    // the earlier tests' deliveries would be claimed, attempted and claimed again: none is due here
    await t.testDb.database.sql`update webhook_deliveries set status = 'failed' where status = 'pending'`;
    const pollMs = 1_000;
    const { seen, deliverer } = countedLoop({ concurrency: 4, pollMs });
    try {
      await eventually(async () => (seen.some((each) => each.kind === "claim") ? true : undefined));
      const before = seen.length;
      const elapsed = await storm(accountId, 1_200);
      const during = seen.slice(before);
      const fullPasses = during.filter((each) => each.kind === "fanOut" && each.accounts === null).length;
      expect(fullPasses).toBeLessThanOrEqual(Math.ceil(elapsed / 1000));
      // the candidate turns of 1.2 s of writes (up to 48 fan-outs and 48 claims before): none
      expect(during.filter((each) => each.kind === "fanOut" && each.accounts !== null)).toEqual([]);
      // looked up once, and again after each full pass forgot it
      const lookups = during.filter((each) => each.kind === "lookup");
      expect(lookups.length).toBeGreaterThanOrEqual(1);
      expect(lookups.length).toBeLessThanOrEqual(fullPasses + 1);
      for (const lookup of lookups) expect(lookup.accounts).toEqual([accountId]);
      // a claim after each full pass, or after pollMs of quiet turns
      expect(during.filter((each) => each.kind === "claim").length).toBeLessThanOrEqual(fullPasses + Math.ceil(elapsed / pollMs));
    } finally {
      await deliverer.stop();
    }
  });

  test("a webhook made for such an account is looked at from the next turn, not from the next pass over every account", async () => {
    const { accountId, key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    // after its first turn, the loop passes over every account only once a minute: within this test, only the
    // webhook's own notification (kiln_webhooks) can make it look at the account again
    const { seen, deliverer } = countedLoop({ concurrency: 0, pollMs: 60_000, fullPassMs: 60_000 });
    try {
      // the account's writes are announced; the loop looks it up and knows it has no webhook
      await storm(accountId, 2_000);
      expect(seen.some((each) => each.kind === "lookup" && each.accounts?.includes(accountId))).toBe(true);
      expect(seen.some((each) => each.kind === "fanOut" && each.accounts?.includes(accountId))).toBe(false);
      await webhookOf(key);
      const madeAt = performance.now();
      await storm(accountId, 1_000);
      const named = seen.find((each) => each.kind === "fanOut" && each.at > madeAt && each.accounts?.includes(accountId));
      expect(named).toBeDefined();
      // looked at by a turn for the notified accounts, with no pass over every account in between
      expect(seen.some((each) => each.kind === "fanOut" && each.accounts === null && each.at > madeAt && each.at < named!.at)).toBe(false);
    } finally {
      await deliverer.stop();
    }
  });
});
