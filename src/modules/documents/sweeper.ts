/**
 * Background sweeps: purging soft-deleted documents whose purgeAt has passed, and removing content
 * files no document points at (left by a crash between writing a file and committing its row, or
 * between committing a replacement and removing the old file). Every node runs them; they coordinate
 * through PostgreSQL (each job below names its lock), so the cluster does each piece of work once.
 */
import type { Database } from "../../db/client";
import { LOCKS, withTryAdvisoryLock } from "../../db/locks";
import type { Logger } from "../../http/context";
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
    const keys = await deps.repository.purgeDue(deps.now(), PURGE_BATCH);
    for (const key of keys) await deps.store.remove(key).catch(() => {});
    purged += keys.length;
    if (keys.length < PURGE_BATCH) return purged;
  }
}

/**
 * Removes content files older than the grace period that no document references; returns how many.
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
export function sweepOrphansOnce(deps: SweepDeps & { database: Pick<Database, "sql"> }, graceMs = ORPHAN_GRACE_MS): Promise<number | undefined> {
  return withTryAdvisoryLock(deps.database.sql, LOCKS.orphanSweep, () => sweepOrphans(deps, graceMs));
}

/**
 * Runs both sweeps at once and then periodically (purges every `intervalMs`, orphans at most once per
 * grace period); stop() waits for a sweep in progress.
 */
export function startSweepers(deps: SweepDeps & { database: Pick<Database, "sql">; logger: Logger; intervalMs: number }): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let lastOrphanSweep = -Infinity;
  const tick = async () => {
    try {
      const purged = await purgeDue(deps);
      if (purged > 0) deps.logger.log("info", "purged due documents", { purged });
      if (deps.now() - lastOrphanSweep >= ORPHAN_GRACE_MS) {
        lastOrphanSweep = deps.now();
        const removed = await sweepOrphansOnce(deps);
        if (removed) deps.logger.log("info", "removed orphaned content files", { removed });
      }
    } catch (error) {
      deps.logger.log("error", "sweep failed", { error: (error as Error).message });
    }
  };
  const schedule = () => {
    running ??= tick().finally(() => { running = undefined; });
  };
  schedule();
  const timer = setInterval(schedule, deps.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
