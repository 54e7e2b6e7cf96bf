/**
 * Which run the worker pool stops when the process passes UTILITY_MEMORY_LIMIT_BYTES: the one whose
 * worker brought in the most memory since it started (./thread-memory.ts says how that is known).
 */
import { currentThreadId, memoryPageSize, threadPageFaults } from "./thread-memory";

/** What the choice needs of a run under way. */
export interface MeasuredRun {
  startedAt: number;
  /** the worker's thread and its page faults when the run started (the worker says so) */
  thread?: { id: number; faultsAtStart: number };
}

/** Whether this system tells each thread's page faults (./thread-memory.ts). */
const THREADS_MEASURED = currentThreadId() !== undefined;

/** Memory a run's worker brought in since the run started; 0 before the worker said it started. */
const broughtIn = (run: MeasuredRun) =>
  run.thread ? Math.max(0, (threadPageFaults(run.thread.id) ?? 0) - run.thread.faultsAtStart) * memoryPageSize() : 0;

/**
 * The run to stop when the process is `excessBytes` past the memory limit: the one whose worker
 * brought in the most memory since it started, whichever started first. When the runs under way
 * brought in less than the excess together, the memory is held elsewhere (a stopped worker's, not yet
 * given back; request bodies) and stopping one would free little: none is stopped. Where threads are
 * not measured, the longest running run is stopped.
 */
export function memoryHog<Run extends MeasuredRun>(running: Run[], excessBytes: number): Run | undefined {
  if (!THREADS_MEASURED) return running.reduce((a, b) => (b.startedAt < a.startedAt ? b : a));
  const ranked = running.map((run) => ({ run, bytes: broughtIn(run) }));
  if (ranked.reduce((sum, { bytes }) => sum + bytes, 0) < excessBytes) return undefined;
  return ranked.reduce((a, b) => (b.bytes > a.bytes ? b : a)).run;
}
