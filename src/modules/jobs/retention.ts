/**
 * A finished job and its results are kept JOBS_RETENTION_MS after it finished: a sweep every
 * SWEEP_INTERVAL_MS deletes the older ones, a batch at a time (their items go with them). Cluster-once:
 * every node runs it, under the advisory lock LOCKS.jobSweep, tried without waiting, so one node sweeps
 * and the others skip their turn.
 */
import { type BackgroundWork, every } from "../../core/background";
import type { Database } from "../../db/client";
import { LOCKS, withTryAdvisoryLock } from "../../db/locks";
import type { Logger } from "../../observability/logger";
import { sweepFinishedJobs } from "./repository";

/** Jobs deleted per statement: a large job's items go with it, so a batch stays a short statement. */
const BATCH = 20;

export async function sweepJobs(database: Pick<Database, "db">, before: number): Promise<number> {
  let swept = 0;
  for (;;) {
    const count = await sweepFinishedJobs(database.db, before, BATCH);
    swept += count;
    if (count < BATCH) return swept;
  }
}

export const jobRetention = (deps: {
  database: Pick<Database, "db" | "sql">;
  retentionMs: number;
  intervalMs: number;
  logger: Logger;
}): BackgroundWork => ({
  name: "job sweep",
  clusterOnce: ["advisory lock"],
  start: () =>
    every(deps.intervalMs, () =>
      withTryAdvisoryLock(deps.database.sql, LOCKS.jobSweep, () => sweepJobs(deps.database, Date.now() - deps.retentionMs)).catch((error) =>
        deps.logger.log("error", "job sweep failed", { error: (error as Error).message }),
      ),
    ),
});
