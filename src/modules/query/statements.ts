/**
 * SQL of the query indexes. Every statement names the account: an index id, an entry and a build belong
 * to one account, and a shard key of (account_id) keeps each of them on one node (docs/operations.md).
 */
import { statement } from "../../db/statement";
import { activeInFolderTree } from "../documents/statements";

export interface IndexRow {
  id: string;
  accountId: string;
  folder: string;
  name: string;
  fields: { path: string; order: "asc" | "desc" }[];
  unique: boolean;
  state: "building" | "ready" | "failed";
  reason: string | null;
  processed: number;
  total: number;
  multikey: boolean;
  createdAt: number;
}

/** An index's progress is its build job's (the newest, should a build have been made again) while it has one. */
const BUILD = `(select j.processed, j.total from jobs j where j.account_id = indexes.account_id and j.kind = 'indexBuild'
  and j.params->>'indexId' = indexes.id order by j.created_at desc limit 1)`;
const INDEX_COLUMNS = `id, account_id as "accountId", folder, name, fields, "unique", state, reason,
  coalesce((select processed from ${BUILD} b), processed) as processed, coalesce((select total from ${BUILD} b), total) as total,
  multikey, created_at::float8 as "createdAt"`;

/** Raw: the account's indexes, in the order kiln_index_document compares their ids. */
export const ACCOUNT_INDEXES = statement<[accountId: string], IndexRow>(
  `select ${INDEX_COLUMNS} from indexes where account_id = $1 order by id collate "C"`,
);

/** Raw: the account's query limits (its plan's, or as an administrator set them). */
export const QUERY_LIMITS = statement<
  [accountId: string],
  { maxIndexedArrayElements: number | null; maxIndexedValueBytes: number | null; maxFilterBytes: number | null }
>(`select max_indexed_array_elements as "maxIndexedArrayElements", max_indexed_value_bytes as "maxIndexedValueBytes",
  max_filter_bytes as "maxFilterBytes" from accounts where id = $1`);

export const ONE_INDEX = statement<[accountId: string, id: string], IndexRow>(
  `select ${INDEX_COLUMNS} from indexes where account_id = $1 and id = $2`,
);

const INDEX_COUNT_TEXT = `
  select max_indexes as "maxIndexes", (select count(*)::int from indexes where account_id = $1) as count
  from accounts where id = $1`;

/** Raw: the account's index limit and count, read without a lock (a create's early refusal). */
export const INDEX_COUNT = statement<[accountId: string], { maxIndexes: number | null; count: number }>(INDEX_COUNT_TEXT);

/**
 * Raw: the account row locked as every write of the account locks it (NO KEY UPDATE, the reservation's
 * strength), with its index limit and count.
 */
export const LOCK_ACCOUNT = statement<[accountId: string], { maxIndexes: number | null; count: number }>(
  `${INDEX_COUNT_TEXT} for no key update`,
);

/**
 * Raw: a new index's build catching up, under the account row lock: the active documents of the folder
 * ($3) and its subfolders (as FOLDER_IDS lists them) that the build's job ($1) lacks, committed since
 * its $4 items were listed, appended in the same order; the job's total then.
 * A set difference, not NOT EXISTS: the planner knows nothing of the items this transaction inserted
 * and probed them once per document (10^5 documents: past the statement timeout).
 */
export const CATCH_UP_ITEMS = statement<[jobId: string, accountId: string, folder: string, listed: number], { total: number }>(`
  with missing as (
    select id from documents
     where ${activeInFolderTree("$2", "$3")}
    except
    select document_id from job_items where job_id = $1
  ), added as (
    insert into job_items (job_id, seq, document_id)
    select $1, ($4::int + row_number() over (order by d.created_at, d.id))::int, d.id
      from missing m join documents d on d.id = m.id
    returning 1
  )
  update jobs set total = total + (select count(*) from added) where id = $1 returning total`);

export const INSERT_INDEX = statement<
  [id: string, accountId: string, folder: string, name: string, fields: string, unique: boolean, state: string, total: number, now: number],
  IndexRow
>(`insert into indexes (id, account_id, folder, name, fields, "unique", state, total, created_at, updated_at)
  values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $9) returning ${INDEX_COLUMNS}`);

/** Raw: an index's entries removed and the storage they took released (a drop, a failed build). */
export const DROP_ENTRIES = statement<[accountId: string, indexId: string], never>(`
  with gone as (delete from index_entries where account_id = $1 and index_id = $2 returning key)
  update accounts set storage_used_bytes = storage_used_bytes - (select coalesce(sum(octet_length(key) + 48), 0) from gone)
  where id = $1`);

export const DELETE_INDEX = statement<[accountId: string, id: string], { id: string }>(
  "delete from indexes where account_id = $1 and id = $2 returning id",
);

/** Raw: index.ready and index.failed, through the one event writer. */
export const RECORD_INDEX_EVENT = statement<[accountId: string, type: string, folder: string, data: string, now: number], never>(
  "select kiln_record_event($1, $2, $3, $4::jsonb, null, $5)",
);

export interface EntryRow {
  key: Uint8Array;
  documentId: string;
}

/**
 * Raw: one page of an index's range [lower, upper), in key order or backwards, after a position or
 * from the start: four texts from one, each a plain range of the primary key's B-tree.
 */
const scanOf = <Params extends readonly unknown[]>(backward: boolean, after: boolean) =>
  statement<Params, EntryRow>(`
  select key, document_id as "documentId" from index_entries
  where account_id = $1 and index_id = $2 and key >= $3 and key < $4
    ${after ? `and (key, document_id) ${backward ? "<" : ">"} ($6, $7)` : ""}
  order by key ${backward ? "desc" : ""}, document_id ${backward ? "desc" : ""} limit $5`);

type ScanParams = [accountId: string, indexId: string, lower: Uint8Array, upper: Uint8Array, limit: number];
type AfterParams = [...ScanParams, key: Uint8Array, documentId: string];
export const SCAN = {
  forward: scanOf<ScanParams>(false, false),
  backward: scanOf<ScanParams>(true, false),
  forwardAfter: scanOf<AfterParams>(false, true),
  backwardAfter: scanOf<AfterParams>(true, true),
};

/** Raw: every entry of these documents in one index (a multikey index: is this entry the document's first?). */
export const ENTRIES_OF = statement<[accountId: string, indexId: string, documentIds: string], EntryRow>(`
  select key, document_id as "documentId" from index_entries
  where document_id = any($3::text[]) and index_id = $2 and account_id = $1`);

/** Raw: an index's build job, while it runs (a dropped index's build is cancelled). */
export const BUILD_JOB = statement<[accountId: string, indexId: string], { id: string }>(`
  select id from jobs where account_id = $1 and kind = 'indexBuild' and params->>'indexId' = $2 and state in ('queued', 'running')`);

/** Raw: a build's end, ready or failed (with its reason). */
export const FINISH_BUILD = statement<[id: string, state: string, reason: string | null, now: number], IndexRow>(`
  update indexes set state = $2, reason = $3, processed = case when $2 = 'ready' then total else processed end, updated_at = $4
  where id = $1 and state = 'building' returning ${INDEX_COLUMNS}`);
