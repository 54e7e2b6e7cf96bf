/**
 * The jobs module's hand-written SQL. Each is here because Drizzle's builder cannot express it (a claim
 * with FOR UPDATE SKIP LOCKED over two tables in one statement, unnest and jsonb_to_recordset, a
 * conditional insert) or because it runs once per chunk on the engine's hot path.
 */
import { statement } from "../../db/statement";
import type { JobState } from "./model";

/** A JSON array given as its text: arrays travel as one jsonb parameter. */
export type JsonText = string;

/** A job as the engine and the API read it: bigint times as float8 (exact below 2^53), names as the code spells them. */
const JOB = `id, account_id as "accountId", kind, state, params, on_error as "onError", total, processed, succeeded, failed, skipped,
  error, created_at::float8 as "createdAt", started_at::float8 as "startedAt", finished_at::float8 as "finishedAt"`;

export interface JobRecord {
  id: string;
  accountId: string;
  kind: string;
  state: JobState;
  params: unknown;
  onError: "continue" | "stop";
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  skipped: number;
  error: { code: string; message: string; errors?: unknown[] } | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** Submissions of one account take turns, so two at once cannot both pass its queued-jobs limit. */
export const LOCK_ACCOUNT_SUBMISSIONS = statement<[accountId: string]>(`select pg_advisory_xact_lock(hashtext('kiln_jobs:' || $1))`);

/**
 * The job, queued, unless the account already has its plan's maxQueuedJobs waiting ($7 true: an internal
 * job, made by Kiln itself, is never refused). No row: refused.
 */
export const INSERT_JOB = statement<
  [id: string, accountId: string, kind: string, params: string, onError: string, total: number, internal: boolean, now: number],
  JobRecord
>(`insert into jobs (id, account_id, kind, state, params, on_error, total, created_at)
  select $1, $2, $3, 'queued', $4::jsonb, $5, $6, $8
   where $7 or (select count(*) from jobs where account_id = $2 and state = 'queued')
               < coalesce((select max_queued_jobs from accounts where id = $2), 2147483647)
  returning ${JOB}`);

/** A job made in the caller's transaction and found to be empty there (an index's build over a folder that held nothing): gone with its items. */
export const DISCARD_JOB = statement<[jobId: string]>(`delete from jobs where id = $1`);

/** One item per document, in the order given. */
export const INSERT_ITEMS = statement<[jobId: string, documentIds: JsonText]>(
  `insert into job_items (job_id, seq, document_id) select $1, ord, id from jsonb_array_elements_text($2::jsonb) with ordinality as u(id, ord)`,
);

export interface ClaimedChunk {
  job: Pick<JobRecord, "id" | "accountId" | "kind" | "params" | "onError"> | null;
  items: { seq: number; documentId: string }[];
}

/**
 * One claim: the job whose last claim is oldest (so the active jobs, and through them the accounts, take
 * turns) among those of the kinds this node runs ($6) and of accounts not full on this node ($5), a queued one only while its account runs
 * fewer than its plan's maxRunningJobs; then up to $2 of its pending items no live lease holds, skipping
 * rows another claim has locked. The items get claim $3 and a lease until $1 + $4; the job is running.
 */
export const CLAIM = statement<
  [now: number, chunk: number, claim: string, leaseMs: number, fullAccounts: JsonText, kinds: JsonText],
  ClaimedChunk
>(`
  with job as (
    select j.id from jobs j join accounts a on a.id = j.account_id
     where j.state in ('queued', 'running') and j.account_id not in (select jsonb_array_elements_text($5::jsonb))
       and j.kind in (select jsonb_array_elements_text($6::jsonb))
       and (j.state = 'running'
            or (select count(*) from jobs r where r.account_id = j.account_id and r.state in ('running', 'cancelling'))
               < coalesce(a.max_running_jobs, 2147483647))
       and exists (select 1 from job_items i
                    where i.job_id = j.id and i.status = 'pending' and (i.lease_until is null or i.lease_until < $1))
     order by j.claimed_at nulls first, j.created_at
     limit 1
     for update of j skip locked
  ), items as (
    select i.job_id, i.seq from job_items i
     where i.job_id = (select id from job) and i.status = 'pending' and (i.lease_until is null or i.lease_until < $1)
     order by i.seq limit $2
     for update of i skip locked
  ), claimed as (
    update job_items i set claim = $3, lease_until = $1 + $4 from items
     where i.job_id = items.job_id and i.seq = items.seq
    returning i.seq, i.document_id
  ), started as (
    update jobs set claimed_at = $1, state = 'running', started_at = coalesce(started_at, $1)
     where id = (select id from job)
    returning id, account_id as "accountId", kind, params, on_error as "onError"
  )
  select (select to_jsonb(s) from started s) as job,
         coalesce((select jsonb_agg(jsonb_build_object('seq', seq, 'documentId', document_id) order by seq) from claimed), '[]') as items`);

/** The lease of a claim's items renewed until $3, and the job's state (a cancel is seen here). */
export const HEARTBEAT = statement<[jobId: string, claim: string, leaseUntil: number], { state: JobState }>(`
  with renewed as (update job_items set lease_until = $3 where job_id = $1 and claim = $2 and status = 'pending')
  select state from jobs where id = $1`);

/** A claim's items left undone, free for the next claim at once. */
export const RELEASE = statement<[jobId: string, claim: string]>(
  `update job_items set claim = null, lease_until = null where job_id = $1 and claim = $2 and status = 'pending'`,
);

/**
 * In a chunk's commit, first: the job's state, read without its row lock. The row is locked only by the
 * commit's last statement (MARK_ITEMS), so the claims of the other nodes, which skip a locked job, find
 * it free while this chunk's documents are written; a cancel or a failure that comes meanwhile lets this
 * chunk land, and takes effect from the next one.
 */
export const JOB_STATE = statement<[jobId: string], { state: string }>(`select state from jobs where id = $1`);

/** Then the items this claim still holds (a lease that ran out may have let another claim take some), locked. */
export const OWNED_ITEMS = statement<[jobId: string, claim: string, seqs: JsonText], { seq: number }>(
  `select seq from job_items where job_id = $1 and claim = $2 and status = 'pending' and seq in (select jsonb_array_elements_text($3::jsonb)::int) for update`,
);

export interface ItemRecord {
  seq: number;
  status: "succeeded" | "failed" | "skipped";
  output_document_id: string | null;
  version: number | null;
  error: unknown;
  output: string | null;
}

/** The items done ($2, a JSON array of ItemRecord) and the job's progress counted, in the commit's transaction. */
export const MARK_ITEMS = statement<[jobId: string, items: string, now: number]>(`
  with marked as (
    update job_items i set status = r.status, output_document_id = r.output_document_id, version = r.version,
           error = r.error, output = r.output, finished_at = $3, claim = null, lease_until = null
      from jsonb_to_recordset($2::jsonb) as r(seq int, status text, output_document_id text, version int, error jsonb, output text)
     where i.job_id = $1 and i.seq = r.seq and i.status = 'pending'
    returning i.status
  )
  update jobs set processed = processed + (select count(*) from marked),
                  succeeded = succeeded + (select count(*) from marked where status = 'succeeded'),
                  failed = failed + (select count(*) from marked where status = 'failed'),
                  skipped = skipped + (select count(*) from marked where status = 'skipped')
   where id = $1`);

/**
 * Jobs that can finish: running with no item left, or cancelling with no item under a live lease.
 * Read without locks; FINISH checks again under the job's row lock.
 */
export const SETTLEABLE = statement<[now: number], { id: string }>(`
  select j.id from jobs j
   where j.state in ('running', 'cancelling')
     and not exists (select 1 from job_items i
                      where i.job_id = j.id and i.status = 'pending'
                        and (j.state = 'running' or (i.lease_until is not null and i.lease_until >= $1)))
   limit 100`);

/** running → succeeded and cancelling → cancelled when SETTLEABLE still holds, under the row lock. */
export const SETTLE = statement<[jobId: string, now: number], JobRecord>(`
  update jobs j set state = case j.state when 'running' then 'succeeded' else 'cancelled' end, finished_at = $2
   where j.id = $1 and j.state in ('running', 'cancelling')
     and not exists (select 1 from job_items i
                      where i.job_id = j.id and i.status = 'pending'
                        and (j.state = 'running' or (i.lease_until is not null and i.lease_until >= $2)))
  returning ${JOB}`);

/** A running job failed ($2: { code, message }), whatever is left undone. */
export const FAIL = statement<[jobId: string, error: string, now: number], JobRecord>(`
  update jobs set state = 'failed', error = $2::jsonb, finished_at = $3
   where id = $1 and state = 'running'
  returning ${JOB}`);

/** A cancel: a queued job is cancelled at once, a running one is cancelling until its chunks stop. */
export const CANCEL = statement<[jobId: string, accountId: string, now: number], JobRecord>(`
  update jobs set state = case state when 'queued' then 'cancelled' else 'cancelling' end,
                  finished_at = case state when 'queued' then $3::bigint end
   where id = $1 and account_id = $2 and state in ('queued', 'running')
  returning ${JOB}`);

export const FIND_JOB = statement<[jobId: string, accountId: string], JobRecord>(
  `select ${JOB} from jobs where id = $1 and account_id = $2`,
);

/** A job's event, in the transaction that finished it; the NOTIFY wakes streams and webhooks at its commit. */
export const RECORD_EVENT = statement<[accountId: string, type: string, data: string, now: number]>(
  `select kiln_record_event($1, $2, null, $3::jsonb, null, $4::bigint), pg_notify('kiln_events', $1)`,
);

/** Wakes every node's runner (after a submission commits, or when a busy node leaves work unclaimed). */
export const NOTIFY_SUBMITTED = statement<[]>(`select pg_notify('kiln_jobs', '')`);

export interface ResultRow {
  seq: number;
  documentId: string;
  status: "succeeded" | "failed" | "skipped";
  outputDocumentId: string | null;
  version: number | null;
  error: { code: string; message: string; errors?: unknown[] } | null;
  output: string | null;
}

/** A page of a job's results after item $2, in the job's order. */
export const RESULTS_PAGE = statement<[jobId: string, afterSeq: number, limit: number], ResultRow>(`
  select seq, document_id as "documentId", status, output_document_id as "outputDocumentId", version, error, output
    from job_items where job_id = $1 and seq > $2 and status <> 'pending'
   order by seq limit $3`);

/** Finished jobs past the retention, a batch at a time (their items go with them). */
export const SWEEP = statement<[before: number, batch: number]>(
  `delete from jobs where id in (select id from jobs where finished_at < $1 limit $2)`,
);
