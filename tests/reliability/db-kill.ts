/**
 * The database killed under load: `bun tests/reliability/db-kill.ts [--kills 10] [--mode embedded|external|both]`.
 * External mode starts a PostgreSQL server of its own (never the machine's shared one). Exits 1 on any violation.
 */
import { parseArgs } from "node:util";
import { runDbKillTrial } from "./support/db-kill-trial";

const { values } = parseArgs({ options: { kills: { type: "string", default: "10" }, mode: { type: "string", default: "both" } } });
const modes = values.mode === "both" ? (["embedded", "external"] as const) : [values.mode as "embedded" | "external"];
let failed = false;
for (const mode of modes) {
  const result = await runDbKillTrial({ mode, kills: Number(values.kills), log: (line) => console.log(line) });
  console.log(
    `db-kill (${mode}): ${result.kills} postmaster kills, ${result.requests} requests, ${result.acknowledgedWrites} acknowledged writes, ${result.unavailableAnswers} 503 answers while down, ${result.restartsBeforeUnready} restarts faster than /ready could see, ${result.documentsChecked} document checks, longest outage ${result.longestOutageMs} ms, ${result.violations.length} violations`,
  );
  for (const violation of result.violations) console.log(`  VIOLATION ${violation}`);
  failed ||= result.violations.length > 0;
}
process.exit(failed ? 1 : 0);
