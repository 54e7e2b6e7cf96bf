import { describe, expect, test } from "bun:test";
import { ContentRetirer } from "../../../src/modules/documents/retirer";
import type { ContentStore } from "../../../src/storage/content-store";

/** A store whose removals take `removalMs` each and fail for the keys in `failing`; it records what it saw. */
function slowStore(removalMs: number, failing = new Set<string>()) {
  const seen = { removed: [] as string[], inFlight: 0, mostInFlight: 0 };
  const store = {
    async remove(key: string) {
      seen.inFlight++;
      seen.mostInFlight = Math.max(seen.mostInFlight, seen.inFlight);
      await Bun.sleep(removalMs);
      seen.inFlight--;
      if (failing.has(key)) throw new Error("the bucket refused");
      seen.removed.push(key);
    },
  } as unknown as ContentStore;
  return { store, seen };
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const started = Date.now(); !condition(); await Bun.sleep(5)) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out waiting");
  }
}

const keys = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `key-${from + i}`);

describe("ContentRetirer", () => {
  test("a burst of retired keys is all removed, never more than the bound at once", async () => {
    const { store, seen } = slowStore(3);
    const retirer = new ContentRetirer(store, { delayMs: 0, concurrency: 4, maxWaiting: 10_000 });
    for (const key of keys(200)) retirer.retire(key);
    expect(seen.inFlight).toBe(4);
    await until(() => retirer.pending === 0);
    expect(seen.removed.sort()).toEqual(keys(200).sort());
    expect(seen.mostInFlight).toBe(4);
  });

  test("nothing is removed before the delay; each key after it", async () => {
    let clock = 1_000;
    const { store, seen } = slowStore(0);
    const retirer = new ContentRetirer(store, { delayMs: 10_000, concurrency: 4, maxWaiting: 100, now: () => clock });
    retirer.retire("early");
    clock += 6_000;
    retirer.retire("late");
    await Bun.sleep(20);
    expect(seen.removed).toEqual([]);
    clock += 4_000; // "early" is due now, "late" in 6 s
    retirer.retire("later still"); // a retire() looks at what has fallen due
    await until(() => seen.removed.length === 1);
    expect(seen.removed).toEqual(["early"]);
    expect(retirer.pending).toBe(2);
    clock += 10_000;
    retirer.retire("last");
    await until(() => seen.removed.length === 3);
    expect(seen.removed).toEqual(["early", "late", "later still"]);
  });

  test("a due key waits for its timer when nothing else happens", async () => {
    const { store, seen } = slowStore(0);
    const retirer = new ContentRetirer(store, { delayMs: 30, concurrency: 2, maxWaiting: 100 });
    retirer.retire("a");
    retirer.retire("b");
    expect(seen.removed).toEqual([]);
    await until(() => seen.removed.length === 2);
    expect(retirer.pending).toBe(0);
  });

  test("a failed removal is dropped (left to the orphan sweep) and the rest go on", async () => {
    const { store, seen } = slowStore(1, new Set(["key-3"]));
    const retirer = new ContentRetirer(store, { delayMs: 0, concurrency: 2, maxWaiting: 100 });
    for (const key of keys(10)) retirer.retire(key);
    await until(() => retirer.pending === 0);
    expect(seen.removed.sort()).toEqual(
      keys(10)
        .filter((key) => key !== "key-3")
        .sort(),
    );
  });

  test("past maxWaiting keys are not queued: memory stays bounded while the store lags", async () => {
    const { store, seen } = slowStore(50);
    const retirer = new ContentRetirer(store, { delayMs: 0, concurrency: 1, maxWaiting: 5 });
    for (const key of keys(20)) retirer.retire(key);
    // one in flight, five waiting, the other fourteen refused
    expect(retirer.pending).toBe(6);
    await until(() => retirer.pending === 0);
    expect(seen.removed).toEqual(keys(6));
  });

  test("the queue keeps working past its compaction", async () => {
    const { store, seen } = slowStore(0);
    const retirer = new ContentRetirer(store, { delayMs: 0, concurrency: 8, maxWaiting: 100_000 });
    for (const key of keys(5000)) retirer.retire(key);
    await until(() => retirer.pending === 0);
    for (const key of keys(3000, 5000)) retirer.retire(key);
    await until(() => retirer.pending === 0);
    expect(new Set(seen.removed).size).toBe(8000);
  });
});
