/**
 * Wakes the event streams and webhook deliveries of every node once a write has committed: a NOTIFY on
 * `kiln_events` with the account id, sent by the server after the request that wrote, not by the
 * trigger inside the write's transaction (a transaction that NOTIFYs takes a cluster-wide lock at commit,
 * which made every writer commit one at a time). One notifying statement is in flight at a time: the
 * accounts written meanwhile wait for it and share the next, so under a stream of writes the statements
 * follow the round trip, not the answers (one per answer cost each write a round trip of its own).
 * A notification lost (the server stopping right after a write, a write made outside a request such as
 * the purge sweep) costs latency only: streams and deliveries look for new events every second anyway.
 */
import type { Sql } from "postgres";
import { EVENTS_CHANNEL } from "./stream";

export interface EventNotifier {
  notify(accountId: string): void;
}

export function createEventNotifier(sql: Sql, onError: (error: Error) => void): EventNotifier {
  let pending = new Set<string>();
  let busy = false;
  const flush = () => {
    if (pending.size === 0) {
      busy = false;
      return;
    }
    const accounts = [...pending];
    pending = new Set();
    sql`select pg_notify(${EVENTS_CHANNEL}, account) from unnest(${sql.array(accounts)}::text[]) as account`.catch(onError).finally(flush);
  };
  return {
    notify(accountId) {
      pending.add(accountId);
      if (busy) return;
      busy = true;
      setTimeout(flush, 0);
    },
  };
}

/** Methods that may write: a request with one of these that succeeded may have made events. */
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export const mayHaveWritten = (method: string, status: number) => WRITES.has(method) && status < 400;
