/**
 * The short crash-consistency run inside `bun test` (CRASH_KILLS, 5 by default), on the database of the
 * run: embedded PostgreSQL by default, the external server when TEST_DATABASE_URL is set. The full run
 * (≥ 50 kills, both modes) is `bun run test:reliability` (tests/reliability/crash.ts).
 */
import { expect, test } from "bun:test";
import { runCrashTrial } from "./support/crash-trial";

const KILLS = Number(process.env.CRASH_KILLS ?? 5);
const MODE = process.env.TEST_DATABASE_URL ? "external" : "embedded";

// CRASH_KILLS=0: `bun run test:reliability` runs the full trial itself (tests/reliability/crash.ts) first
test.skipIf(KILLS === 0)(`${KILLS} SIGKILLs of the real server (${MODE} PostgreSQL) lose no acknowledged write and leave no orphan`, async () => {
  const result = await runCrashTrial({ kills: KILLS, mode: MODE, log: (line) => console.log(line) });
  console.log(`crash (${MODE}): ${result.kills} kills, ${result.acknowledgedWrites} acknowledged writes (${result.acknowledgedPatches} patches or version restores; ${result.interruptedPatches} interrupted by a kill), ${result.documentsChecked} document checks, ${result.violations.length} violations, ${Math.round(result.elapsedMs)} ms`);
  expect(result.violations).toEqual([]);
  expect(result.acknowledgedWrites).toBeGreaterThan(KILLS);
}, 60_000 + KILLS * 15_000);
