/**
 * The events module's hand-written SQL. Raw because the feed's visibility rule reads the database's own
 * snapshot (pg_current_snapshot), which Drizzle's builder has no words for.
 */

/**
 * Raw: one page of an account's feed after a cursor, oldest first. Only events of transactions older
 * than the oldest one still running are read: every transaction below that horizon has ended, so no
 * event can later appear before the cursor. $1 account, $2/$3 the cursor (tx, seq), $4 the families a
 * key may read (`document`, `pipeline`), $5 the types asked for (null = all; `document.*` = a family),
 * $6 a folder (its documents and those of its subfolders; null = any), $7 the page size.
 */
export const EVENTS_PAGE = `
  select seq::float8 as seq, tx::float8 as tx, id, type, data, created_at::float8 as "createdAt"
  from events
  where account_id = $1 and (tx, seq) > ($2::bigint, $3::bigint)
    and tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
    and split_part(type, '.', 1) = any($4::text[])
    and ($5::text[] is null or type = any($5::text[]) or split_part(type, '.', 1) || '.*' = any($5::text[]))
    and ($6::text is null or folder = $6 or starts_with(folder, $6 || '/'))
  order by tx, seq
  limit $7`;

/** Raw: events older than the retention period, a batch at a time. $1 the cutoff (epoch ms), $2 the batch. */
export const EXPIRED_EVENTS = `
  delete from events where seq in (select seq from events where created_at < $1 order by created_at limit $2)`;
