/**
 * Background work: what a node does besides answering requests (sweeps, webhook delivery). Every node
 * runs the same list (src/index.ts), started in order once the node can serve and stopped in reverse
 * when it drains, so each piece of work must say how the cluster still does it once: the `clusterOnce`
 * of its definition, and the opening comment of its file in detail.
 */

/**
 * How work that every node runs is done once by the cluster:
 * - `advisory lock`: one node at a time, under a PostgreSQL advisory lock tried without waiting (db/locks.ts);
 *   the others skip their turn;
 * - `SKIP LOCKED claim`: every node works, each on the rows it claimed with FOR UPDATE SKIP LOCKED, so no
 *   row is taken by two;
 * - `per node`: by design each node does its own part, because what the work looks after is the node's
 *   own (its open streams, the content it replaced).
 */
export type ClusterOnce = "advisory lock" | "SKIP LOCKED claim" | "per node";

/** Work under way: stop() takes no new work and resolves once the work in progress has ended. */
export interface Running {
  stop(): Promise<void>;
}

export interface BackgroundWork {
  /** for the logs and the start-up list */
  readonly name: string;
  /** each way the work stays cluster-once (a loop may claim rows and take a lock for another part) */
  readonly clusterOnce: readonly ClusterOnce[];
  start(): Running;
}

/**
 * The shape of periodic work: `tick` every `intervalMs` (and at once with `immediately`), never two at
 * once (a tick still running when the next is due makes that one skip), so a slow sweep never piles up
 * behind itself. `tick` handles its own errors (it logs them in its own words).
 */
export function every(intervalMs: number, tick: () => Promise<unknown>, options: { immediately?: boolean } = {}): Running {
  let running: Promise<void> | undefined;
  const schedule = () => {
    running ??= tick().then(
      () => {
        running = undefined;
      },
      () => {
        running = undefined;
      },
    );
  };
  if (options.immediately) schedule();
  const timer = setInterval(schedule, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * The sleep of a loop that is woken rather than timed (the webhook delivery, the job runner): `pause(ms)`
 * waits `ms` or until `wake()`, and `woken` says whether a wake came since the loop last cleared it, so a
 * wake that comes during a turn is not lost. A wait computed from the clock can have run out, and gone
 * below 0, by the time it is asked for (a slow turn after a restart with a backlog): a negative delay
 * makes the runtime print a TimeoutNegativeWarning, so it is clamped.
 */
export class Wakeable {
  woken = false;
  private wakeUp: (() => void) | undefined;

  readonly wake = (): void => {
    this.woken = true;
    this.wakeUp?.();
  };

  pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.wakeUp = undefined;
    });
  }
}

/**
 * Starts the works in order. stop() asks each to stop in reverse order, all at once (none takes new work
 * from then on, and none waits for another to finish before it stops), and resolves once every one has
 * finished its work in progress. A start that throws stops those already started and throws its error.
 */
export function startInOrder(works: readonly BackgroundWork[]): Running {
  const started: Running[] = [];
  const stopAll = async () => {
    await Promise.all(
      started
        .splice(0)
        .reverse()
        .map((running) => running.stop()),
    );
  };
  try {
    for (const work of works) started.push(work.start());
  } catch (error) {
    void stopAll().catch(() => {});
    throw error;
  }
  return { stop: stopAll };
}
