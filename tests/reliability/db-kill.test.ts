/** The database killed under load, bounded for `bun test`: one postmaster kill per mode (the full run: tests/reliability/db-kill.ts). */
import { expect, test } from "bun:test";
import { runDbKillTrial } from "./support/db-kill-trial";

for (const mode of ["embedded", "external"] as const) {
  test(`${mode} PostgreSQL killed under load: 503 while down, back without a Kiln restart, no acknowledged write lost`, async () => {
    const result = await runDbKillTrial({ mode, kills: 1 });
    expect(result.violations).toEqual([]);
    expect(result.acknowledgedWrites).toBeGreaterThan(0);
    expect(result.unavailableAnswers).toBeGreaterThan(0);
    expect(result.documentsChecked).toBeGreaterThan(0);
  }, 180_000);
}
