/**
 * The events module's hand-written SQL. Raw because the feed pages by a cursor over two tables (an
 * account's commits, then each commit's events), which Drizzle's builder cannot express as one index walk.
 */
import { statement } from "../../db/statement";
import type { EventType } from "./catalogue";

/**
 * What every read of an event selects from its row `e` and its transaction's commit `c` (event_commits),
 * named as `EventRecord` (service.ts) reads them: a document event's payload is made from its document fields.
 */
export const EVENT_COLUMNS = `e.id as "eventId", e.type as "eventType", c.seq::float8 as "eventCommit", e.seq::float8 as "eventSeq",
    e.created_at::float8 as "eventCreatedAt", e.folder as "eventFolder", e.data as "eventData",
    e.document_id as "documentId", e.document_name as "documentName", e.document_description as "documentDescription",
    e.document_tags as "documentTags", e.document_file_size::float8 as "documentFileSize", e.document_version as "documentVersion",
    e.document_created_at::float8 as "documentCreatedAt", e.document_updated_at::float8 as "documentUpdatedAt",
    e.document_deleted_at::float8 as "documentDeletedAt", e.document_purge_at::float8 as "documentPurgeAt"`;

/** An event as EVENT_COLUMNS reads it. */
export interface EventRecord {
  eventId: string;
  eventType: EventType;
  eventCommit: number;
  eventSeq: number;
  eventCreatedAt: number;
  eventFolder: string | null;
  /** null for a document event written since migration 0017: its payload is made from the fields below */
  eventData: Record<string, unknown> | null;
  documentId: string | null;
  documentName: string | null;
  documentDescription: string | null;
  documentTags: string[] | null;
  documentFileSize: number | null;
  documentVersion: number | null;
  documentCreatedAt: number | null;
  documentUpdatedAt: number | null;
  documentDeletedAt: number | null;
  documentPurgeAt: number | null;
}

/** EVENTS_PAGE's parameters, $1 to $8. */
export type EventsPageParams = [
  accountId: string,
  commit: number,
  seq: number,
  families: string[],
  types: string[] | null,
  folder: string | null,
  limit: number,
  subfolders: boolean,
];

/** The feed's filters on an event `e`, parameters as EVENTS_PAGE numbers them. */
const EVENT_FILTERS = `
    and split_part(e.type, '.', 1) = any($4::text[])
    and ($5::text[] is null or e.type = any($5::text[]) or split_part(e.type, '.', 1) || '.*' = any($5::text[]))
    and ($6::text is null or e.folder = $6 or ($8::boolean and starts_with(e.folder, $6 || '/')))`;

/**
 * Raw: one page of an account's feed after a cursor, oldest first: the account's commits in their order
 * (event_commits: an account's transactions are numbered as they commit, and a number is visible only once
 * every lower one has committed or rolled back, kiln_number_events), each commit's events by seq. Nothing but
 * the account's own writes decides what is visible. $1 account, $2/$3 the cursor (commit, seq), $4 the
 * families a key may read (`document`, `pipeline`), $5 the types asked for (null = all; `document.*` = a
 * family), $6 a folder (its documents, and those of its subfolders when $8; null = any), $7 the page size. Each
 * commit's events are read by the events' index in seq order, at most a page of them, from the cursor's
 * event in its own commit: a page in the middle of a large transaction (an import's) reads that page only.
 */
export const EVENTS_PAGE = statement<EventsPageParams, EventRecord>(`
  with rest_of_commit as (
    select ${EVENT_COLUMNS}
    from event_commits c
    cross join lateral (
      select * from events e
      where e.account_id = c.account_id and e.tx = c.tx and e.seq > $3::bigint ${EVENT_FILTERS}
      order by e.seq
      limit $7
    ) e
    where c.account_id = $1 and c.seq = $2::bigint
  ), later_commits as (
    select ${EVENT_COLUMNS}
    from event_commits c
    cross join lateral (
      select * from events e
      where e.account_id = c.account_id and e.tx = c.tx ${EVENT_FILTERS}
      order by e.seq
      limit $7
    ) e
    where c.account_id = $1 and c.seq > $2::bigint
    order by c.seq, e.seq
    limit $7
  )
  select * from (select * from rest_of_commit union all select * from later_commits) page
  order by "eventCommit", "eventSeq"
  limit $7`);

/**
 * Raw: where a cursor of the feed before commit numbering (`<transaction id>-<seq>`, ordered by transaction
 * id) resumes in the account's commits: the events kept then were numbered in transaction-id order, and
 * every later commit is numbered after them. The commit of the cursor's transaction: resume after its
 * event; else after the last commit of an older transaction (null: from the start). $1 account, $2 tx.
 */
export const LEGACY_CURSOR = statement<[accountId: string, tx: number], { seq: number; sameTx: boolean }>(`
  select seq::float8 as seq, (tx = $2::bigint) as "sameTx" from event_commits
  where account_id = $1 and tx <= $2::bigint
  order by tx desc
  limit 1`);

/**
 * Raw: events older than the retention period, a batch at a time, from the oldest by seq: the first $2
 * events, those of them older than $1 (epoch ms). Events are numbered as they are written, so the expired
 * ones are a prefix of the primary key; the batch reads that index's head and nothing else, and a batch
 * with fewer expired than $2 ends the sweep.
 */
export const EXPIRED_EVENTS = statement<[cutoff: number, batch: number], never>(`
  delete from events where seq in (select seq from events order by seq limit $2) and created_at < $1`);

/**
 * Raw: the commit rows (event_commits) older than $1 whose events are all gone, $2 at most. Runs after the
 * events' sweep; a commit keeps its row while one of its events is kept.
 */
export const EXPIRED_COMMITS = statement<[cutoff: number, batch: number], never>(`
  delete from event_commits where ctid in (
    select c.ctid from event_commits c
    where c.committed_at < $1
      and not exists (select 1 from events e where e.account_id = c.account_id and e.tx = c.tx)
    limit $2)`);

/**
 * Raw, for the live streams (stream.ts), once a second on each node while a stream is open: the event
 * counter of each account with an open stream ($1). A counter that moved since the last look wakes that
 * account's streams: a safety net under the notifications, for changes no request announced (the purge
 * sweep) and notifications lost.
 */
export const EVENT_COUNTERS = statement<[accountIds: string[]], { accountId: string; lastSeq: number }>(`
  select account_id as "accountId", last_seq::float8 as "lastSeq" from account_event_sequences where account_id = any($1::text[])`);

/**
 * Raw, for the live streams, once a second on each node: which keys of the open streams are still
 * valid (not revoked, not expired, not deleted with their account), so a revoked key's stream ends as
 * soon as its next request would be refused. $1 the key ids, $2 now (epoch ms).
 */
export const VALID_STREAM_KEYS = statement<[keyIds: string[], now: number], { id: string }>(`
  select id from api_keys where id = any($1::text[]) and revoked_at is null and (expires_at is null or expires_at > $2)`);
