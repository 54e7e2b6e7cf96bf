/**
 * The events module's hand-written SQL. Raw because the feed's visibility rule reads the database's own
 * snapshot (pg_current_snapshot), which Drizzle's builder has no words for.
 */

/**
 * What every read of an event selects from its row `e` (the feed, the stream, a webhook delivery), named
 * as `EventRecord` (service.ts) reads them: a document event's payload is made from its document fields.
 */
export const EVENT_COLUMNS = `e.id as "eventId", e.type as "eventType", e.tx::float8 as "eventTx", e.seq::float8 as "eventSeq",
    e.created_at::float8 as "eventCreatedAt", e.folder as "eventFolder", e.data as "eventData",
    e.document_id as "documentId", e.document_name as "documentName", e.document_description as "documentDescription",
    e.document_tags as "documentTags", e.document_file_size::float8 as "documentFileSize", e.document_version as "documentVersion",
    e.document_created_at::float8 as "documentCreatedAt", e.document_updated_at::float8 as "documentUpdatedAt",
    e.document_deleted_at::float8 as "documentDeletedAt", e.document_purge_at::float8 as "documentPurgeAt"`;

/**
 * Raw: one page of an account's feed after a cursor, oldest first. Only events of transactions older
 * than the oldest one still running are read: every transaction below that horizon has ended, so no
 * event can later appear before the cursor. $1 account, $2/$3 the cursor (tx, seq), $4 the families a
 * key may read (`document`, `pipeline`), $5 the types asked for (null = all; `document.*` = a family),
 * $6 a folder (its documents, and those of its subfolders when $8; null = any), $7 the page size.
 */
export const EVENTS_PAGE = `
  select ${EVENT_COLUMNS}
  from events e
  where e.account_id = $1 and (e.tx, e.seq) > ($2::bigint, $3::bigint)
    and e.tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
    and split_part(e.type, '.', 1) = any($4::text[])
    and ($5::text[] is null or e.type = any($5::text[]) or split_part(e.type, '.', 1) || '.*' = any($5::text[]))
    and ($6::text is null or e.folder = $6 or ($8::boolean and starts_with(e.folder, $6 || '/')))
  order by e.tx, e.seq
  limit $7`;

/**
 * Raw: events older than the retention period, a batch at a time, from the oldest by seq: the first $2
 * events, those of them older than $1 (epoch ms). Events are numbered as they are written, so the expired
 * ones are a prefix of the primary key; the batch reads that index's head and nothing else, and a batch
 * with fewer expired than $2 ends the sweep.
 */
export const EXPIRED_EVENTS = `
  delete from events where seq in (select seq from events order by seq limit $2) and created_at < $1`;

/**
 * Raw, for the live streams (stream.ts), once a second on each node while a stream is open: the
 * visibility horizon now (the same snapshot's xmin as EVENTS_PAGE reads below), and which of the
 * accounts with an open stream have events that crossed it since the last look, $2 the horizon then.
 * Every event committed since that look has a transaction id at or above it, so no event reaches the
 * feed without being in one such window: a stream woken by it reads what a NOTIFY alone may have
 * announced too early (an older transaction still running). $1 the accounts.
 */
export const EVENTS_CROSSED_HORIZON = `
  with now as (select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as horizon)
  select now.horizon::float8 as horizon,
    array(select distinct account_id from events
          where account_id = any($1::text[]) and tx >= $2::bigint and tx < now.horizon) as accounts
  from now`;

/**
 * Raw, for the live streams, once a second on each node: which keys of the open streams are still
 * valid (not revoked, not expired, not deleted with their account), so a revoked key's stream ends as
 * soon as its next request would be refused. $1 the key ids, $2 now (epoch ms).
 */
export const VALID_STREAM_KEYS = `
  select id from api_keys where id = any($1::text[]) and revoked_at is null and (expires_at is null or expires_at > $2)`;
