/**
 * Background sweeps: purging soft-deleted documents (every version) whose purgeAt has passed, and
 * removing content files no document or kept version points at (left by a crash between writing a file
 * and committing its row, or between committing a replacement and removing the old file).
 *
 * Cluster-once: every node runs them; the purge claims its rows with FOR UPDATE SKIP LOCKED (purgeDue)
 * and the orphan sweep runs under the advisory lock LOCKS.orphanSweep (sweepOrphansOnce), so the cluster
 * does each piece of work once.
 */
import { type BackgroundWork, every, type Running } from "../../core/background";
import type { Database } from "../../db/client";
import { LOCKS, withTryAdvisoryLock } from "../../db/locks";
import type { Logger } from "../../observability/logger";
import type { Metrics, SweepKind } from "../../observability/metrics";
import type { ContentStore } from "../../storage/content-store";
import type { DocumentsRepository } from "./repository";

const PURGE_BATCH = 500;
const ORPHAN_BATCH = 500;
/**
 * A file younger than this may belong to a write whose transaction has not committed yet, so the
 * orphan sweep leaves it alone. Writes commit within seconds; an hour is far beyond any of them.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface SweepDeps {
  repository: DocumentsRepository;
  store: ContentStore;
  now: () => number;
}

/**
 * Purges every due document; returns how many. Lock: each due row is claimed with `FOR UPDATE SKIP
 * LOCKED` in the statement that deletes it and releases its bytes (repository.purgeDue), so nodes
 * sweeping at once take disjoint rows, and only the node whose statement deleted a row removes its content.
 */
export async function purgeDue(deps: SweepDeps): Promise<number> {
  let purged = 0;
  for (;;) {
    const batch = await deps.repository.purgeDue(deps.now(), PURGE_BATCH);
    for (const key of batch.contentKeys) await deps.store.remove(key).catch(() => {});
    purged += batch.purged;
    if (batch.purged < PURGE_BATCH) return purged;
  }
}

/**
 * Removes content files older than the grace period that no document or version references; returns how many.
 * Lock: none of its own; nodes run it through sweepOrphansOnce. A file younger than the grace period is
 * never judged, so a write whose row has not committed yet is safe.
 */
export async function sweepOrphans(deps: SweepDeps, graceMs = ORPHAN_GRACE_MS): Promise<number> {
  const cutoff = deps.now() - graceMs;
  let removed = 0;
  let batch: string[] = [];
  const flush = async () => {
    const referenced = await deps.repository.referencedKeys(batch);
    for (const key of batch) {
      if (referenced.has(key)) continue;
      await deps.store.remove(key);
      removed++;
    }
    batch = [];
  };
  for await (const file of deps.store.list()) {
    if (file.modifiedAt > cutoff) continue;
    if (file.incomplete) {
      await deps.store.remove(file.key);
      removed++;
      continue;
    }
    batch.push(file.key);
    if (batch.length >= ORPHAN_BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  return removed;
}

/**
 * The orphan sweep of a cluster node. Lock: the session-level advisory lock LOCKS.orphanSweep, tried
 * without waiting; resolves to undefined when another node is sweeping (it lists the same store).
 */
export function sweepOrphansOnce(
  deps: SweepDeps & { database: Pick<Database, "sql"> },
  graceMs = ORPHAN_GRACE_MS,
): Promise<number | undefined> {
  return withTryAdvisoryLock(deps.database.sql, LOCKS.orphanSweep, () => sweepOrphans(deps, graceMs));
}

type SweepersDeps = SweepDeps & {
  database: Pick<Database, "sql">;
  logger: Logger;
  intervalMs: number;
  metrics?: Pick<Metrics, "observeSweep">;
};

/** Both sweeps as the node's background work (src/index.ts). */
export const documentSweeps = (deps: SweepersDeps): BackgroundWork => ({
  name: "document sweeps",
  clusterOnce: ["SKIP LOCKED claim", "advisory lock"],
  start: () => startSweepers(deps),
});

/**
 * Runs both sweeps at once and then periodically (purges every `intervalMs`, orphans at most once per
 * grace period); stop() waits for a sweep in progress.
 */
export function startSweepers(deps: SweepersDeps): Running {
  let lastOrphanSweep = -Infinity;
  const tick = async () => {
    let kind: SweepKind = "purge";
    try {
      const purged = await purgeDue(deps);
      deps.metrics?.observeSweep(kind, "ok", purged);
      if (purged > 0) deps.logger.log("info", "purged due documents", { purged });
      if (deps.now() - lastOrphanSweep >= ORPHAN_GRACE_MS) {
        kind = "orphans";
        lastOrphanSweep = deps.now();
        const removed = await sweepOrphansOnce(deps);
        // undefined: another node held the lock and swept instead, so this node ran nothing to count
        if (removed !== undefined) deps.metrics?.observeSweep(kind, "ok", removed);
        if (removed) deps.logger.log("info", "removed orphaned content files", { removed });
      }
    } catch (error) {
      deps.metrics?.observeSweep(kind, "error", 0);
      deps.logger.log("error", "sweep failed", { sweep: kind, error: (error as Error).message });
    }
  };
  return every(deps.intervalMs, tick, { immediately: true });
}
