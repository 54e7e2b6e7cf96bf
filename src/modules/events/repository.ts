/** The events module's reads and deletes, each one statement of statements.ts. */
import type { Db } from "../../db/client";
import { run } from "../../db/statement";
import {
  EVENT_COUNTERS,
  EVENTS_PAGE,
  type EventRecord,
  type EventsPageParams,
  EXPIRED_COMMITS,
  EXPIRED_EVENTS,
  LEGACY_CURSOR,
  VALID_STREAM_KEYS,
} from "./statements";

/** Where an old cursor's transaction resumes (LEGACY_CURSOR); undefined: from the start. */
export async function legacyCommit(db: Db, accountId: string, tx: number): Promise<{ seq: number; sameTx: boolean } | undefined> {
  const [found] = await run(db, LEGACY_CURSOR, [accountId, tx]);
  return found;
}

/** One page of an account's feed (EVENTS_PAGE). */
export const eventsPage = (db: Db, params: EventsPageParams): Promise<EventRecord[]> => run(db, EVENTS_PAGE, params);

/** Deletes up to `batch` of the oldest events older than `cutoff`; returns how many (EXPIRED_EVENTS). */
export const deleteExpiredEvents = async (db: Db, cutoff: number, batch: number): Promise<number> =>
  (await run(db, EXPIRED_EVENTS, [cutoff, batch])).count;

/** Deletes up to `batch` commit rows older than `cutoff` left without events; returns how many (EXPIRED_COMMITS). */
export const deleteExpiredCommits = async (db: Db, cutoff: number, batch: number): Promise<number> =>
  (await run(db, EXPIRED_COMMITS, [cutoff, batch])).count;

/** The event counter of each of these accounts (EVENT_COUNTERS). */
export const eventCounters = (db: Db, accountIds: string[]): Promise<{ accountId: string; lastSeq: number }[]> =>
  run(db, EVENT_COUNTERS, [accountIds]);

/** Which of these API keys are still valid at `now` (VALID_STREAM_KEYS). */
export const validStreamKeys = (db: Db, keyIds: string[], now: number): Promise<{ id: string }[]> =>
  run(db, VALID_STREAM_KEYS, [keyIds, now]);
