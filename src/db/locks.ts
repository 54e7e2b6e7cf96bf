/**
 * Cluster-wide mutual exclusion through PostgreSQL advisory locks: every node that shares the database
 * sees the same locks, and a node that dies releases its locks with its connection.
 */
import type { Sql } from "postgres";

/** Lock ids in use, one per job, so no two jobs ever share one by accident. */
export const LOCKS = {
  /** src/db/client.ts: migrations */
  migrations: 4_242_001,
  /** src/modules/documents/sweeper.ts: the orphaned-content sweep */
  orphanSweep: 4_242_002,
  /** src/modules/events/retention.ts: the sweep of events past EVENT_RETENTION_MS */
  eventSweep: 4_242_003,
  /** src/http/idempotency-sweep.ts: the sweep of expired idempotency keys */
  idempotencySweep: 4_242_004,
  /** src/modules/jobs/retention.ts: the sweep of finished jobs past JOBS_RETENTION_MS */
  jobSweep: 4_242_005,
} as const;

/**
 * Runs `work` while this session holds the advisory lock `lockId` (on one reserved connection);
 * resolves to undefined at once, without running it, when another session holds it.
 */
export async function withTryAdvisoryLock<T>(sql: Sql, lockId: number, work: () => Promise<T>): Promise<T | undefined> {
  const connection = await sql.reserve();
  try {
    const [{ locked }] = await connection<{ locked: boolean }[]>`select pg_try_advisory_lock(${lockId}) as locked`;
    if (!locked) return undefined;
    try {
      return await work();
    } finally {
      await connection`select pg_advisory_unlock(${lockId})`.catch(() => {});
    }
  } finally {
    connection.release();
  }
}
