/**
 * The full crash-consistency run:
 *   bun tests/reliability/crash.ts [--kills 50] [--mode embedded|external|both] [--store disk|s3|both]
 * External mode uses the PostgreSQL server of TEST_DATABASE_URL (default: the machine's, on 127.0.0.1:5432)
 * and creates and drops its own database there; the S3 store is a bucket on an s3rver started for the run.
 * Exits 1 on any violation.
 */
import { parseArgs } from "node:util";
import { runJobCrashTrial } from "./support/crash-job";
import { runCrashTrial } from "./support/crash-trial";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "50" },
    mode: { type: "string", default: "both" },
    store: { type: "string", default: "both" },
  },
});
const kills = Number(values.kills);
const modes = values.mode === "both" ? (["embedded", "external"] as const) : [values.mode as "embedded" | "external"];
const stores = values.store === "both" ? (["disk", "s3"] as const) : [values.store as "disk" | "s3"];
process.env.TEST_DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";

let failed = false;

// First prove the checks can fail: removed content must be reported, planted orphans must not be.
for (const store of stores) {
  const selfTest = await runCrashTrial({ kills: 2, mode: modes[0], store, sabotage: true });
  const caught =
    selfTest.sabotaged !== undefined &&
    selfTest.violations.length > 0 &&
    selfTest.violations.every((violation) => violation.includes(selfTest.sabotaged!) || violation.includes("1 missing, 0 incomplete"));
  console.log(
    `crash self-test (${store}): removed the content of ${selfTest.sabotaged}; reported: ${JSON.stringify(selfTest.violations)} → ${caught ? "caught" : "NOT CAUGHT"}`,
  );
  failed ||= !caught;
}

for (const store of stores) {
  for (const mode of modes) {
    const result = await runCrashTrial({ kills, mode, store, log: (line) => console.log(line) });
    console.log(
      `crash (${mode}, ${store}): ${result.kills} kills, ${result.acknowledgedWrites} acknowledged writes (${result.acknowledgedPatches} patches or version restores; ${result.interruptedPatches} interrupted by a kill), ${result.documentsChecked} document checks, ${result.violations.length} violations, ${(result.elapsedMs / 1000).toFixed(1)} s`,
    );
    for (const violation of result.violations) console.log(`  VIOLATION ${violation}`);
    failed ||= result.violations.length > 0;
  }
}
for (const mode of modes) {
  const result = await runJobCrashTrial({ kills: Math.max(2, Math.round(kills / 10)), mode });
  console.log(
    `crash job (${mode}): ${result.documents} documents, ${result.kills} kills at ${result.processedAtKills.join(", ")} processed, ${result.violations.length} violations, ${(result.elapsedMs / 1000).toFixed(1)} s`,
  );
  for (const violation of result.violations) console.log(`  VIOLATION ${violation}`);
  failed ||= result.violations.length > 0;
}
process.exit(failed ? 1 : 0);
