/**
 * The short crash-consistency run inside `bun test` (CRASH_KILLS, 5 by default on the disk store, 3 on the
 * S3 store), on the database of the run: embedded PostgreSQL by default, the external server when
 * TEST_DATABASE_URL is set. The full run (≥ 50 kills, both modes, both stores) is `bun run test:reliability`
 * (tests/reliability/crash.ts). With `events`: each acknowledged write has exactly one event, refused ones
 * none, and a webhook (its receiver down for 2 s mid-trial) receives every event of the feed, verified.
 */
import { expect, test } from "bun:test";
import { runJobCrashTrial } from "./support/crash-job";
import { runCrashTrial } from "./support/crash-trial";

const MODE = process.env.TEST_DATABASE_URL ? "external" : "embedded";
const KILLS = { disk: Number(process.env.CRASH_KILLS ?? 5), s3: Number(process.env.CRASH_KILLS ?? 3) };

// CRASH_KILLS=0: `bun run test:reliability` runs the full trial itself (tests/reliability/crash.ts) first
for (const store of ["disk", "s3"] as const) {
  const kills = KILLS[store];
  test.skipIf(kills === 0)(
    `${kills} SIGKILLs of the real server (${MODE} PostgreSQL, ${store} store) lose no acknowledged write and leave no orphan`,
    async () => {
      const result = await runCrashTrial({ kills, mode: MODE, store, events: true, log: (line) => console.log(line) });
      console.log(
        `crash (${MODE}, ${store}): ${result.kills} kills, ${result.acknowledgedWrites} acknowledged writes (${result.acknowledgedPatches} patches or version restores; ${result.interruptedPatches} interrupted by a kill), ${result.documentsChecked} document checks, ${result.violations.length} violations, ${Math.round(result.elapsedMs)} ms`,
      );
      const events = result.events;
      if (events)
        console.log(
          `crash events (${MODE}, ${store}): ${events.events} events in the feeds, each checked exactly once per acknowledged write; ${events.refusedWrites} refused writes without one; of the writes in flight at a kill, ${events.inFlightApplied} applied (one event each) and ${events.inFlightLost} not (none); webhook: ${events.deliveries} verified deliveries (${events.duplicates} duplicates, ${events.badSignatures} bad signatures), receiver down ${Math.round(events.receiverDownMs)} ms, every event delivered ${Math.round(events.convergeMs)} ms after the last restart's checks`,
        );
      expect(result.violations).toEqual([]);
      expect(events?.events).toBeGreaterThan(0);
      expect(events?.refusedWrites).toBeGreaterThan(0);
      expect(result.acknowledgedWrites).toBeGreaterThan(kills);
    },
    60_000 + kills * 15_000,
  );
}

test("a job through 2 SIGKILLs of the node running it: every document processed exactly once, progress exact", async () => {
  const result = await runJobCrashTrial({ kills: 2, mode: MODE });
  console.log(
    `crash job (${MODE}): ${result.documents} documents, kills at ${result.processedAtKills.join(", ")} processed, ${result.violations.length} violations, ${Math.round(result.elapsedMs)} ms`,
  );
  expect(result.violations).toEqual([]);
  expect(result.processedAtKills.every((processed) => processed < result.documents)).toBe(true);
}, 120_000);
