/**
 * Idempotency keys live IDEMPOTENCY_TTL_MS: a sweep every SWEEP_INTERVAL_MS deletes the expired ones
 * (purgeExpiredIdempotencyKeys). Cluster-once: every node runs it; it runs under the advisory lock
 * LOCKS.idempotencySweep, tried without waiting, so one node sweeps and the others skip their turn.
 */
import { type BackgroundWork, every } from "../core/background";
import type { Database } from "../db/client";
import { LOCKS, withTryAdvisoryLock } from "../db/locks";
import type { Logger } from "../observability/logger";
import { purgeExpiredIdempotencyKeys } from "./idempotency";

export const idempotencySweep = (deps: { database: Pick<Database, "db" | "sql">; intervalMs: number; logger: Logger }): BackgroundWork => ({
  name: "idempotency key sweep",
  clusterOnce: ["advisory lock"],
  start: () =>
    every(deps.intervalMs, () =>
      withTryAdvisoryLock(deps.database.sql, LOCKS.idempotencySweep, () => purgeExpiredIdempotencyKeys(deps.database.db, Date.now())).catch(
        (error) => deps.logger.log("error", "idempotency key sweep failed", { error: (error as Error).message }),
      ),
    ),
});
