/**
 * Removes replaced content from the store a while after its replacement committed, a few removals at a
 * time. A download that read the row just before the commit may still be about to open the old content
 * (the response body is read lazily), hence the delay. The bound on removals in flight is what keeps a
 * burst of replaces from turning, one delay later, into as many concurrent deletes against the store:
 * on S3 those took every connection to the bucket and starved downloads and writes (bench/README.md,
 * Storage).
 *
 * Cluster-once: per node by design. A node retires only the content its own requests replaced, and
 * keeps the queue in memory: a node that stops or dies with keys waiting leaves their content to the
 * orphan sweep (sweeper.ts), which runs cluster-once. So it needs no start or stop: its timer is
 * unreferenced and set only while keys wait.
 */
import type { ContentStore } from "../../storage/content-store";

export interface RetirerOptions {
  delayMs: number;
  /** removals in flight at most */
  concurrency: number;
  /**
   * keys waiting at most; beyond it a key is not queued and its content is left to the orphan sweep
   * (sweeper.ts), which removes unreferenced content an hour after it was written
   */
  maxWaiting: number;
  now?: () => number;
}

const RETIRER_DEFAULTS: RetirerOptions = { delayMs: 10_000, concurrency: 4, maxWaiting: 100_000 };

export class ContentRetirer {
  /** keys in the order they were retired, so also in the order they fall due (one delay for all) */
  private waiting: { key: string; dueAt: number }[] = [];
  /** index of the first key in `waiting` not yet handed to a removal */
  private head = 0;
  private inFlight = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly store: ContentStore,
    private readonly options: RetirerOptions = RETIRER_DEFAULTS,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Keys retired and not yet removed (waiting or in flight). */
  get pending(): number {
    return this.waiting.length - this.head + this.inFlight;
  }

  retire(key: string): void {
    if (this.waiting.length - this.head >= this.options.maxWaiting) return;
    this.waiting.push({ key, dueAt: this.now() + this.options.delayMs });
    this.pump();
  }

  /** Starts the removals that are due, up to the bound, and sets a timer for the next one otherwise. */
  private pump(): void {
    while (this.inFlight < this.options.concurrency && this.head < this.waiting.length && this.waiting[this.head].dueAt <= this.now()) {
      const { key } = this.waiting[this.head++];
      this.inFlight++;
      void this.store
        .remove(key)
        .catch(() => {})
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
    this.compact();
    if (this.timer || this.inFlight >= this.options.concurrency || this.head === this.waiting.length) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(0, this.waiting[this.head].dueAt - this.now()),
    );
    this.timer.unref?.();
  }

  /** Drops the handled front of the queue once it is most of it. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }
}
