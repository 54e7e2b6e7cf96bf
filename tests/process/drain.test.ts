/**
 * The drain in-process, over stand-ins for what a node holds: what stops when, and DRAIN_TIMEOUT_MS
 * bounding it whatever is stuck (tests/drain.test.ts drains the real server).
 */
import { expect, test } from "bun:test";
import { type DrainParts, drain } from "../../src/process/drain";

/** A node whose parts record when they are called; `stuck` parts never finish. */
function node(options: { inFlightMs?: number; stuckRequest?: boolean; stuckBackground?: boolean } = {}) {
  const log: string[] = [];
  const lines: { level: string; message: string }[] = [];
  let pending = options.inFlightMs !== undefined || options.stuckRequest ? 1 : 0;
  if (options.inFlightMs !== undefined) setTimeout(() => (pending = 0), options.inFlightMs);
  const never = new Promise<never>(() => {});
  const parts: DrainParts = {
    logger: { log: (level, message) => lines.push({ level, message }) },
    server: {
      get pendingRequests() {
        return pending;
      },
      async stop(force) {
        log.push(force ? "server stopped by force" : "server stops");
        if (force) pending = 0;
        if (pending > 0) await never;
      },
    },
    background: {
      async stop() {
        log.push("background stops");
        if (options.stuckBackground) await never;
      },
    },
    async endStreams() {
      log.push("streams end");
    },
    workerPool: {
      async stop() {
        log.push("workers stop");
      },
    },
    rateCounter: { close: () => log.push("rate counter closes") },
    database: {
      async close(ms) {
        log.push(`database closes (${ms} ms)`);
      },
    },
  };
  return { parts, log, messages: () => lines.map((line) => line.message) };
}

test("background work stops at once, streams end after the delay, requests finish, then workers, rate counter, database", async () => {
  const { parts, log, messages } = node({ inFlightMs: 150 });
  const started = performance.now();
  const drained = drain("SIGTERM", parts, { delayMs: 50, timeoutMs: 5_000, closeDatabaseMs: 100 });
  expect(log).toEqual(["background stops"]);
  await Bun.sleep(20);
  expect(log).toEqual(["background stops"]); // serving on through the delay
  await drained;
  expect(performance.now() - started).toBeGreaterThanOrEqual(140); // waited for the request in flight
  expect(log).toEqual([
    "background stops",
    "streams end",
    "server stops",
    "workers stop",
    "rate counter closes",
    "database closes (100 ms)",
  ]);
  expect(messages()).toEqual(["draining", "stopped"]);
});

test("a request that never finishes: closed by force at the timeout, and the rest still stops", async () => {
  const { parts, log, messages } = node({ stuckRequest: true });
  const started = performance.now();
  await drain("SIGTERM", parts, { delayMs: 0, timeoutMs: 200, closeDatabaseMs: 100 });
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(log).toContain("server stopped by force");
  expect(log.at(-1)).toBe("database closes (100 ms)");
  expect(messages()).toContain("drain timed out: closing the requests still in flight");
});

test("background work that never finishes: a warning at the timeout, and the database still closes", async () => {
  const { parts, log, messages } = node({ stuckBackground: true });
  const started = performance.now();
  await drain("SIGINT", parts, { delayMs: 0, timeoutMs: 200, closeDatabaseMs: 100 });
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(messages()).toContain("drain timed out: background work (sweeps, webhook attempts, workers) left unfinished");
  expect(log.slice(-2)).toEqual(["rate counter closes", "database closes (100 ms)"]);
  expect(messages().at(-1)).toBe("stopped");
});
