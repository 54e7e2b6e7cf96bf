/** Sweepers of several nodes over one database: each due purge done once, each orphan judged by one node at a time. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Database } from "../../../src/db/client";
import { LOCKS, withTryAdvisoryLock } from "../../../src/db/locks";
import { documentsRepository } from "../../../src/modules/documents/repository";
import { purgeDue, type SweepDeps, sweepOrphansOnce } from "../../../src/modules/documents/sweeper";
import type { ContentStore } from "../../../src/storage/content-store";
import { contentStoreIn } from "../../../src/storage/disk";
import { createTestApp, type TestApp } from "../../support/app";

const HOUR = 3_600_000;
const NODES = 4;
let clock = 1_700_000_000_000;
let t: TestApp;
let nodes: Database[];
/** every remove() any node's store was asked for, by key */
const removals = new Map<string, number>();

/** One node's view: its own connection pool over the shared database, a store that counts removals. */
function nodeDeps(database: Database, now = () => clock): SweepDeps & { database: Database } {
  const disk = contentStoreIn(t.config.dataDir);
  const store: ContentStore = {
    put: (bytes) => disk.put(bytes),
    open: (key) => disk.open(key),
    list: () => disk.list(),
    probe: () => disk.probe(),
    async remove(key) {
      removals.set(key, (removals.get(key) ?? 0) + 1);
      await disk.remove(key);
    },
  };
  return { repository: documentsRepository(database.db), store, now, database };
}

beforeAll(async () => {
  t = await createTestApp({ PURGE_AFTER_MS: String(HOUR) }, { now: () => clock });
  nodes = Array.from({ length: NODES }, () => connect(t.testDb.url, { poolMax: 2 }));
});
afterAll(async () => {
  for (const node of nodes) await node.close();
  await t.close();
});

const DOCS = "/api/v1/documents";

test(`${NODES} nodes sweeping at once purge each due document exactly once; storage counters stay exact`, async () => {
  const accounts = await Promise.all([0, 1, 2].map(() => t.newAccount({ permissions: ["documents"] })));
  const expectedUsed: number[] = [];
  const dueKeys: string[] = [];
  for (const [index, { key }] of accounts.entries()) {
    let kept = 0;
    for (let i = 0; i < 40; i++) {
      const content = JSON.stringify({ account: index, i, pad: "x".repeat(i) });
      const id = (await t.json("POST", DOCS, { key, body: { name: "d", contentText: content } })).body.document.id;
      if (i % 4 === 0)
        kept += content.length; // stays active
      else await t.json("DELETE", `${DOCS}/${id}`, { key });
    }
    expectedUsed.push(kept);
  }
  for await (const file of contentStoreIn(t.config.dataDir).list()) dueKeys.push(file.key);
  clock += 2 * HOUR;
  removals.clear();

  const purged = await Promise.all(nodes.map((node) => purgeDue(nodeDeps(node))));
  expect(purged.reduce((sum, n) => sum + n, 0)).toBe(3 * 30);
  expect(removals.size).toBe(3 * 30);
  expect([...removals.values()].every((count) => count === 1)).toBe(true);
  for (const [index, { key }] of accounts.entries()) {
    const usage = await t.json("GET", "/api/v1/usage", { key });
    expect(usage.body.storage.usedBytes).toBe(expectedUsed[index]);
    expect((await t.json("GET", `${DOCS}?deleted=true`, { key })).body.documents).toEqual([]);
    expect((await t.json("GET", DOCS, { key })).body.documents.length).toBe(10);
  }
  // a second round finds nothing left to do
  expect(await Promise.all(nodes.map((node) => purgeDue(nodeDeps(node))))).toEqual(Array(NODES).fill(0));
}, 120_000);

test("the orphan sweep runs on one node at a time: the others skip while it holds the lock", async () => {
  const store = contentStoreIn(t.config.dataDir);
  const orphans = await Promise.all([1, 2, 3].map((i) => store.put(new TextEncoder().encode(`[${i}]`))));
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = withTryAdvisoryLock(nodes[0].sql, LOCKS.orphanSweep, () => held.then(() => "held"));
  await Bun.sleep(100);
  expect(await Promise.all(nodes.slice(1).map((node) => sweepOrphansOnce(nodeDeps(node, Date.now), -1000)))).toEqual(
    Array(NODES - 1).fill(undefined),
  );
  release();
  expect(await holder).toBe("held");

  removals.clear();
  const results = await Promise.all(nodes.map((node) => sweepOrphansOnce(nodeDeps(node, Date.now), -1000)));
  const swept = results.filter((result) => result !== undefined);
  expect(swept.length).toBeGreaterThanOrEqual(1);
  expect(swept.reduce((sum, n) => sum + n!, 0)).toBe(orphans.length);
  for (const orphan of orphans) expect(removals.get(orphan.key)).toBe(1);
  expect([...removals.values()].every((count) => count === 1)).toBe(true);
});
