/**
 * Wakes the event streams and webhook deliveries of every node once a write has committed: a NOTIFY on
 * `kiln_events` with the account id, sent by the server after the request that wrote, not by the
 * trigger inside the write's transaction (a transaction that NOTIFYs takes a cluster-wide lock at commit,
 * which made every writer commit one at a time). One notifying statement is in flight at a time, and
 * the next starts NOTIFY_SPACING_MS after the last at the earliest: the accounts written meanwhile wait
 * and share it. A write after a quiet spell is announced at once; under a stream of writes a node sends
 * at most one statement per spacing, where one per round trip cost each create about a tenth of the
 * server's CPU (every notification is a commit, a message to each node's listener and a wake of its loops).
 * A notification lost (the server stopping right after a write, a write made outside a request such as
 * the purge sweep) costs latency only: streams and deliveries look for new events every second anyway.
 */
import type { Sql } from "postgres";
import { EVENTS_CHANNEL } from "./stream";

/** the least time between the starts of two notifying statements of one node */
export const NOTIFY_SPACING_MS = 10;

export interface EventNotifier {
  notify(accountId: string): void;
}

/** Sends one `kiln_events` notification per account, in one statement. */
export const sendEventNotifications =
  (sql: Sql) =>
  (accounts: string[]): Promise<unknown> =>
    sql`select pg_notify(${EVENTS_CHANNEL}, account) from unnest(${sql.array(accounts)}::text[]) as account`;

export function createEventNotifier(
  send: (accounts: string[]) => Promise<unknown>,
  onError: (error: Error) => void,
  spacingMs = NOTIFY_SPACING_MS,
): EventNotifier {
  let pending = new Set<string>();
  // a statement is waiting for its turn or in flight
  let scheduled = false;
  let lastStarted = Number.NEGATIVE_INFINITY;
  const schedule = () => {
    scheduled = true;
    setTimeout(flush, Math.max(0, lastStarted + spacingMs - performance.now()));
  };
  const flush = () => {
    const accounts = [...pending];
    pending = new Set();
    lastStarted = performance.now();
    send(accounts)
      .catch(onError)
      .finally(() => {
        scheduled = false;
        if (pending.size > 0) schedule();
      });
  };
  return {
    notify(accountId) {
      pending.add(accountId);
      if (!scheduled) schedule();
    },
  };
}

/** Methods that may write: a request with one of these that succeeded may have made events. */
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export const mayHaveWritten = (method: string, status: number) => WRITES.has(method) && status < 400;
