/**
 * The short crash-consistency run inside `bun test` (CRASH_KILLS, 5 by default on the disk store, 3 on the
 * S3 store), on the database of the run: embedded PostgreSQL by default, the external server when
 * TEST_DATABASE_URL is set. The full run (≥ 50 kills, both modes, both stores) is `bun run test:reliability`
 * (tests/reliability/crash.ts).
 */
import { expect, test } from "bun:test";
import { runCrashTrial } from "./support/crash-trial";

const MODE = process.env.TEST_DATABASE_URL ? "external" : "embedded";
const KILLS = { disk: Number(process.env.CRASH_KILLS ?? 5), s3: Number(process.env.CRASH_KILLS ?? 3) };

// CRASH_KILLS=0: `bun run test:reliability` runs the full trial itself (tests/reliability/crash.ts) first
for (const store of ["disk", "s3"] as const) {
  const kills = KILLS[store];
  test.skipIf(kills === 0)(
    `${kills} SIGKILLs of the real server (${MODE} PostgreSQL, ${store} store) lose no acknowledged write and leave no orphan`,
    async () => {
      const result = await runCrashTrial({ kills, mode: MODE, store, log: (line) => console.log(line) });
      console.log(
        `crash (${MODE}, ${store}): ${result.kills} kills, ${result.acknowledgedWrites} acknowledged writes (${result.acknowledgedPatches} patches or version restores; ${result.interruptedPatches} interrupted by a kill), ${result.documentsChecked} document checks, ${result.violations.length} violations, ${Math.round(result.elapsedMs)} ms`,
      );
      expect(result.violations).toEqual([]);
      expect(result.acknowledgedWrites).toBeGreaterThan(kills);
    },
    60_000 + kills * 15_000,
  );
}
