/**
 * Events live EVENT_RETENTION_MS: a sweep every SWEEP_INTERVAL_MS deletes the older ones
 * (sweepExpiredEvents). Cluster-once: every node runs it; it runs under the advisory lock
 * LOCKS.eventSweep, tried without waiting, so one node sweeps and the others skip their turn.
 */
import { type BackgroundWork, every } from "../../core/background";
import type { Database } from "../../db/client";
import { LOCKS, withTryAdvisoryLock } from "../../db/locks";
import type { Logger } from "../../observability/logger";
import { sweepExpiredEvents } from "./service";

export const eventRetention = (deps: {
  database: Pick<Database, "db" | "sql">;
  retentionMs: number;
  intervalMs: number;
  logger: Logger;
}): BackgroundWork => ({
  name: "event sweep",
  clusterOnce: ["advisory lock"],
  start: () =>
    every(deps.intervalMs, () =>
      withTryAdvisoryLock(deps.database.sql, LOCKS.eventSweep, () =>
        sweepExpiredEvents(deps.database.db, Date.now() - deps.retentionMs),
      ).catch((error) => deps.logger.log("error", "event sweep failed", { error: (error as Error).message })),
    ),
});
