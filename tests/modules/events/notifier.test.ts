/**
 * The notification the server sends on `kiln_events` after a write (src/modules/events/notifier.ts):
 * after every request that may have made an event, and not after runs that save nothing, which are
 * writes by method only and the busiest requests an account sends; and how a node spaces them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createEventNotifier } from "../../../src/modules/events/notifier";
import { EVENTS_CHANNEL } from "../../../src/modules/events/stream";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let listener: postgres.Sql;
const heard: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  listener = postgres(t.testDb.url, { max: 1, onnotice: () => {} });
  await listener.listen(EVENTS_CHANNEL, (accountId) => heard.push(accountId));
});
afterAll(async () => {
  await listener.end({ timeout: 1 });
  await t.close();
});

/** Waits up to 5 s for `condition`, and fails the test if it never holds. */
const until = async (condition: () => boolean) => {
  for (let waited = 0; !condition() && waited < 5000; waited += 5) await Bun.sleep(5);
  expect(condition()).toBe(true);
};

/** The accounts notified while `requests` run, once every notification sent by then has arrived. */
async function notifiedDuring(requests: () => Promise<void>): Promise<string[]> {
  heard.length = 0;
  await requests();
  // a marker sent after the requests' own notifications arrives after them on the same channel
  const marker = `marker-${crypto.randomUUID()}`;
  await Bun.sleep(50); // the server sends its notification on the next turn after the answer
  await t.testDb.database.sql`select pg_notify(${EVENTS_CHANNEL}, ${marker})`;
  await until(() => heard.includes(marker));
  expect(heard).toContain(marker);
  return heard.filter((accountId) => accountId !== marker);
}

test("runs that save nothing send no notification; a run that saves, and a document write, do", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents", "utilities"] });
  const runs = [
    ["/api/v1/utilities/schema.clean-json", { inputs: { primary: { a: null } } }],
    ["/api/v1/pipelines/run", { steps: [{ utility: "schema.clean-json" }], inputs: { primary: { a: null } } }],
    // past UTILITY_INLINE_MAX_BYTES with inline inputs only: the worker reads the body, this thread does not
    ["/api/v1/utilities/schema.clean-json", { inputs: { primary: { a: null, text: "x".repeat(8192) } } }],
  ] as const;
  const quiet = await notifiedDuring(async () => {
    for (const [path, body] of runs) expect((await t.json("POST", path, { key, body })).status).toBe(200);
  });
  expect(quiet).toEqual([]);

  for (const [path, body] of runs) {
    const saving = await notifiedDuring(async () => {
      const res = await t.json("POST", path, { key, body: { ...body, output: { saveAs: { name: "saved.json" } } } });
      expect(res.status).toBe(200);
    });
    expect(saving).toEqual([accountId]);
  }

  const created = await notifiedDuring(async () => {
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "doc", content: 1 } })).status).toBe(201);
  });
  expect(created).toEqual([accountId]);
});

test("writes answered while a notification is on its way are each notified, and writes after them too", async () => {
  const accounts = await Promise.all([1, 2, 3].map(() => t.newAccount()));
  const write = (key: string, name: string) =>
    t.json("POST", "/api/v1/documents", { key, body: { name, content: 1 } }).then((answer) => expect(answer.status).toBe(201));
  const burst = await notifiedDuring(async () => {
    await Promise.all(accounts.flatMap(({ key }) => [1, 2, 3, 4].map((i) => write(key, `d${i}`))));
  });
  expect(new Set(burst)).toEqual(new Set(accounts.map((account) => account.accountId)));
  const after = await notifiedDuring(() => write(accounts[1]!.key, "later"));
  expect(after).toEqual([accounts[1]!.accountId]);
});

/** A notifier over a recording `send`, spaced `spacingMs`; each statement resolves when `finish` is called. */
function recordedNotifier(spacingMs: number) {
  const sent: { accounts: string[]; at: number; finish: (error?: Error) => void }[] = [];
  const errors: string[] = [];
  const notifier = createEventNotifier(
    (accounts) =>
      new Promise((resolve, reject) => {
        sent.push({ accounts, at: performance.now(), finish: (error) => (error ? reject(error) : resolve(undefined)) });
      }),
    (error) => errors.push(error.message),
    spacingMs,
  );
  return { notifier, sent, errors };
}

test("a write after a quiet spell is sent at once; writes within the spacing share the next statement, which waits out the spacing", async () => {
  const spacing = 300;
  const { notifier, sent } = recordedNotifier(spacing);
  const first = performance.now();
  notifier.notify("a");
  await until(() => sent.length === 1);
  expect(sent[0]!.accounts).toEqual(["a"]);
  expect(sent[0]!.at - first).toBeLessThan(spacing);
  sent[0]!.finish();

  for (const account of ["b", "c", "b"]) notifier.notify(account);
  await until(() => sent.length === 2);
  expect(sent[1]!.accounts).toEqual(["b", "c"]);
  expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(spacing - 1);
  sent[1]!.finish();
});

test("one statement in flight at a time: writes answered while a slow one runs go out after it, and a failed one loses nothing later", async () => {
  const { notifier, sent, errors } = recordedNotifier(10);
  notifier.notify("a");
  await until(() => sent.length === 1);
  notifier.notify("b");
  await Bun.sleep(100); // ten spacings: the statement for "a" has not answered yet
  expect(sent).toHaveLength(1);
  sent[0]!.finish(new Error("connection lost"));
  await until(() => sent.length === 2);
  expect(errors).toEqual(["connection lost"]);
  expect(sent[1]!.accounts).toEqual(["b"]);
  sent[1]!.finish();
  await Bun.sleep(50);
  notifier.notify("c");
  await until(() => sent.length === 3);
  expect(sent[2]!.accounts).toEqual(["c"]);
});
