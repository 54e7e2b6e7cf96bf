/**
 * The hashes of the API keys in the database, read the first time a throttled client needs them
 * (src/modules/auth/index.ts). They tell a key that may be valid from one that cannot be without a lookup per
 * request, so a throttled address's random keys cost no database work while a valid key sent from the
 * same address is still looked up and served. A revoked or deleted key stays in the index (its lookup
 * refuses it), so the index holds one entry per key the database held while the process ran.
 */
import type { Db } from "../../db/client";
import { keysRepository } from "./repository";

/** The least time between two reads of the database, however many unknown keys ask for one. */
export const KEY_INDEX_READ_INTERVAL_MS = 500;
/**
 * Each read after the first takes the keys created since this long before the newest one already read,
 * so a key whose created_at lags (another node's clock, a slow commit) is not missed.
 */
const OVERLAP_MS = 300_000;

export class KeyIndex {
  private readonly hashes = new Set<string>();
  /** created_at of the newest key read; undefined until a read found one */
  private newest: number | undefined;
  /** performance.now() when the last read started */
  private lastReadAt = -Infinity;
  /** the read not started yet that callers wait for, and the chain it starts after */
  private next: Promise<void> | undefined;
  private previous: Promise<unknown> = Promise.resolve();
  /** database reads made, for tests and metrics */
  reads = 0;

  constructor(private readonly db: Db) {}

  /**
   * Whether the key may exist: it is in the index, or in it after a read that starts after this call
   * (so a key created on any node before the call is found, at the cost of waiting for that read).
   */
  async mayExist(keyHash: string): Promise<boolean> {
    if (this.hashes.has(keyHash)) return true;
    await this.readAfterNow();
    return this.hashes.has(keyHash);
  }

  private readAfterNow(): Promise<void> {
    if (!this.next) {
      const next = this.previous.then(async () => {
        const wait = this.lastReadAt + KEY_INDEX_READ_INTERVAL_MS - performance.now();
        if (wait > 0) await Bun.sleep(wait);
        this.next = undefined; // callers from now on need a read that starts after this one
        this.lastReadAt = performance.now();
        await this.read();
      });
      this.next = next;
      this.previous = next.catch(() => undefined);
    }
    return this.next;
  }

  private async read(): Promise<void> {
    this.reads++;
    const rows = await keysRepository(this.db).hashesCreatedSince(this.newest === undefined ? undefined : this.newest - OVERLAP_MS);
    for (const { keyHash, createdAt } of rows) {
      this.hashes.add(keyHash);
      if (this.newest === undefined || createdAt > this.newest) this.newest = createdAt;
    }
  }
}
