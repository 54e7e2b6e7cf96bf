/**
 * Drain, on SIGTERM or SIGINT: the node leaves the load balancer's rotation, finishes what it serves and
 * closes what it holds, in the reverse order of its start, within DRAIN_TIMEOUT_MS whatever is stuck.
 */
import type { Running } from "../core/background";
import type { Logger } from "../observability/logger";

/** What a started node holds, as the drain needs it. */
export interface DrainParts {
  logger: Logger;
  /** the listener: its requests in flight, and stop (`force`: close those still open) */
  server: { readonly pendingRequests: number; stop(force?: boolean): Promise<unknown> };
  /** the node's background work (src/index.ts): it serves no request, so it stops as the drain begins */
  background: Running;
  /** ends the live event streams, which never finish by themselves (their clients resume elsewhere) */
  endStreams(): Promise<unknown>;
  workerPool: { stop(): Promise<unknown> };
  rateCounter: { close(): unknown };
  database: { close(timeoutMs: number): Promise<unknown> };
}

export interface DrainTimes {
  /** DRAIN_DELAY_MS: serving on, for balancers that poll /ready */
  delayMs: number;
  /** DRAIN_TIMEOUT_MS: the bound on all of it, whatever is stuck */
  timeoutMs: number;
  /** closing the database gets this much more: running queries get it, then their connections close */
  closeDatabaseMs: number;
}

/**
 * The caller has made /ready answer 503. The node goes on serving for the drain delay and while requests
 * are in flight, then stops listening and waits for the last ones and its background work; the timeout
 * bounds all of it, and closing the database gets `closeDatabaseMs` more.
 */
export async function drain(signal: string, parts: DrainParts, times: DrainTimes): Promise<void> {
  const { logger, server } = parts;
  logger.log("info", "draining", { signal, inFlight: server.pendingRequests });
  // no new background work from now on (webhook attempts under way end within WEBHOOK_TIMEOUT_MS)
  const backgroundStopped = parts.background.stop();
  const deadline = Date.now() + times.timeoutMs;
  const untilDeadline = () => Bun.sleep(Math.max(0, deadline - Date.now()));
  await Bun.sleep(Math.min(times.delayMs, times.timeoutMs));
  await Promise.race([parts.endStreams(), untilDeadline()]);
  while (server.pendingRequests > 0 && Date.now() < deadline) await Bun.sleep(20);
  const stopped = await Promise.race([server.stop().then(() => true), untilDeadline().then(() => false)]);
  if (!stopped) {
    logger.log("warn", "drain timed out: closing the requests still in flight", { inFlight: server.pendingRequests });
    await server.stop(true);
  }
  const finished = Promise.all([backgroundStopped, parts.workerPool.stop()]).then(() => true);
  if (!(await Promise.race([finished, untilDeadline().then(() => false)])))
    logger.log("warn", "drain timed out: background work (sweeps, webhook attempts, workers) left unfinished", { signal });
  parts.rateCounter.close();
  await parts.database.close(times.closeDatabaseMs);
  logger.log("info", "stopped", { signal });
}
