/**
 * The events feed: what changed in an account, in an order a consumer can resume from without missing
 * anything. Events are written in the transaction of each change, by the statement that makes it (a create,
 * a new version: kiln_create, kiln_new_version) or by the documents' and pipelines' triggers (kiln_document_events,
 * kiln_pipeline_events). The feed's order is each account's own: its transactions numbered as they commit
 * (kiln_number_events), then
 * each transaction's events, so nothing another account or database does holds an account's feed back.
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import type { FolderFilter } from "../../core/metadata";
import type { Db } from "../../db/client";
import { documentView } from "../documents/service";
import { EVENT_TYPES, type EventType, isEventFamily } from "./catalogue";
import { deleteExpiredCommits, deleteExpiredEvents, eventsPage, legacyCommit } from "./repository";
import type { EventRecord } from "./statements";

export const EVENTS_LIMIT_DEFAULT = 100;
export const EVENTS_LIMIT_MAX = 500;

export interface EventView {
  id: string;
  type: EventType;
  createdAt: number;
  /** where a consumer resumes after this event (`after`, or the SSE Last-Event-ID) */
  cursor: string;
  data: Record<string, unknown>;
}

export interface EventPosition {
  /** the number of the event's transaction in its account's feed (event_commits.seq) */
  commit: number;
  seq: number;
  /** a cursor handed out before commit numbering (`<tx>-<seq>`): where it resumes is looked up as it is read */
  legacyTx?: number;
}

export const FEED_START: EventPosition = { commit: 0, seq: 0 };

/** The feed's order (EVENTS_PAGE's `order by`): negative when `a` comes before `b`, 0 for the same event. */
export const compareEventPositions = (a: EventPosition, b: EventPosition) => a.commit - b.commit || a.seq - b.seq;

/** An old cursor stays as it was until an event is read after it. */
export const encodeEventCursor = (position: EventPosition) =>
  position.legacyTx === undefined ? `${position.commit}.${position.seq}` : `${position.legacyTx}-${position.seq}`;

const invalidEventCursor = (path: string) =>
  httpError(ERRORS.invalid_cursor, "The cursor is not valid; pass the cursor of an event (or nextCursor) unchanged", {
    errors: [{ path, message: "invalid cursor" }],
  });

export function decodeEventCursor(cursor: string | undefined, path = "/after"): EventPosition {
  if (cursor === undefined || cursor === "") return FEED_START;
  const match = /^([0-9]{1,15})([.-])([0-9]{1,15})$/.exec(cursor);
  if (!match) throw invalidEventCursor(path);
  const seq = Number(match[3]);
  return match[2] === "." ? { commit: Number(match[1]), seq } : { commit: 0, seq, legacyTx: Number(match[1]) };
}

/**
 * Where a cursor of the old feed (ordered by transaction id) resumes: right after its event when its
 * transaction's commit row is kept, else after the last older transaction's (LEGACY_CURSOR). Exact for
 * every cursor the old feed handed out: it listed an event only once every older transaction had ended,
 * and the migration numbered the events kept then in transaction-id order, before any later commit.
 */
async function resolveLegacy(db: Db, accountId: string, position: EventPosition): Promise<EventPosition> {
  if (position.legacyTx === undefined) return position;
  const found = await legacyCommit(db, accountId, position.legacyTx);
  if (!found) return FEED_START;
  return found.sameTx ? { commit: found.seq, seq: position.seq } : { commit: found.seq + 1, seq: 0 };
}

export interface EventFilter {
  /** exact types or families (`document.*`); undefined = every type */
  types?: string[];
  /** a folder: its documents' events (and with subfolders, those below it); undefined = any */
  folder?: FolderFilter;
}

/** `type=a,b` → the list, each checked against the known types and families. */
export function parseEventTypes(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const types = raw.split(",").map((type) => type.trim());
  for (const type of types) {
    const family = type.endsWith(".*") ? type.slice(0, -2) : undefined;
    if (family !== undefined ? !isEventFamily(family) : !(EVENT_TYPES as readonly string[]).includes(type)) {
      throw httpError(
        ERRORS.validation_failed,
        `type: unknown event type '${type}'; known: ${EVENT_TYPES.join(", ")} (or a family such as document.*)`,
        { errors: [{ path: "/type", message: `unknown event type '${type}'` }] },
      );
    }
  }
  return types;
}

/**
 * Whether a read with these families and filter lists `event`: EVENTS_PAGE's rule in memory, for the
 * live streams that share one read of their account's feed. A document event's folder is its document's.
 */
export function eventMatches(event: EventView, families: readonly string[], filter: EventFilter): boolean {
  const family = event.type.split(".", 1)[0];
  if (!families.includes(family)) return false;
  if (filter.types && !filter.types.includes(event.type) && !filter.types.includes(`${family}.*`)) return false;
  if (filter.folder === undefined) return true;
  const folder = (event.data.document as { folder?: string | null } | undefined)?.folder ?? null;
  const { path, subfolders } = filter.folder;
  return folder !== null && (folder === path || (subfolders && folder.startsWith(`${path}/`)));
}

export type { EventRecord } from "./statements";

/**
 * A document event's payload: the document as the documents API shows it, as the change left it (for a
 * purge, as it was), with when it was deleted and is due to be purged while it is in the trash.
 */
function documentEventData(record: EventRecord): Record<string, unknown> {
  const document = documentView({
    id: record.documentId!,
    name: record.documentName!,
    description: record.documentDescription,
    tags: record.documentTags!,
    folder: record.eventFolder,
    fileSize: record.documentFileSize!,
    contentVersion: record.documentVersion!,
    createdAt: record.documentCreatedAt!,
    updatedAt: record.documentUpdatedAt!,
  });
  return {
    document: {
      ...document,
      ...(record.documentDeletedAt !== null ? { deletedAt: record.documentDeletedAt } : {}),
      ...(record.documentPurgeAt !== null ? { purgeAt: record.documentPurgeAt } : {}),
    },
  };
}

/** The event as the feed, the stream and every webhook delivery show it. */
export const eventView = (record: EventRecord): EventView => ({
  id: record.eventId,
  type: record.eventType,
  createdAt: record.eventCreatedAt,
  cursor: encodeEventCursor({ commit: record.eventCommit, seq: record.eventSeq }),
  data: record.eventData ?? documentEventData(record),
});

/** Up to `limit` events after `after`, oldest first; an empty page means nothing newer is visible yet. */
export async function readEvents(
  db: Db,
  accountId: string,
  families: string[],
  filter: EventFilter,
  after: EventPosition,
  limit: number,
): Promise<EventView[]> {
  const from = await resolveLegacy(db, accountId, after);
  const rows = await eventsPage(db, [
    accountId,
    from.commit,
    from.seq,
    families,
    filter.types ?? null,
    filter.folder?.path ?? null,
    limit,
    filter.folder?.subfolders ?? true,
  ]);
  return rows.map(eventView);
}

/**
 * Deletes events older than `cutoff`, oldest first, in batches, until a batch reaches a newer one, then
 * the commit rows left without events; returns how many events.
 */
export async function sweepExpiredEvents(db: Db, cutoff: number, batch = 5000): Promise<number> {
  let removed = 0;
  for (;;) {
    const count = await deleteExpiredEvents(db, cutoff, batch);
    removed += count;
    if (count < batch) break;
  }
  while ((await deleteExpiredCommits(db, cutoff, batch)) === batch);
  return removed;
}
