/**
 * The documents module's hand-written SQL, each statement written once; everything else in
 * repository.ts is Drizzle's query builder. A statement is here for the reason beside it: either
 * Drizzle's builder cannot express it, or it runs on a hot route where assembling the same text and
 * mapping every row in JavaScript on each call costs a measurable share of the request (bench/README.md).
 */
import { getTableColumns } from "drizzle-orm";
import { type DocumentRow, documents } from "../../db/schema";
import { statement } from "../../db/statement";

/**
 * The account compared as an expression, not as an indexable column, so that every plan finds a
 * document by its primary key: a generic plan cached while the table was small may otherwise look it up
 * through an account index and, once the account holds thousands of documents, scan them all.
 */
export const ACCOUNT_OF_DOCUMENT = "account_id || ''";

const documentColumns = Object.entries(getTableColumns(documents));

/** A text[] parameter as PostgreSQL's array literal (repository.ts, textArray). */
export type TextArray = string;

export interface AccountLimitsRow {
  storageLimitBytes: number | null;
  storageUsedBytes: number;
  maxDocumentBytes: number | null;
  /** bytes of the versions a new version of the document would drop (maxVersions) */
  droppableBytes: number;
}

/**
 * Columns under the names and with the types Drizzle gives them (bigint as float8, exact below 2^53 as
 * Drizzle's number mode assumes), so postgres.js hands back rows as Drizzle would.
 */
const columnsAsFields = (columns: typeof documentColumns) =>
  columns.map(([field, column]) => `${column.name}${column.columnType === "PgBigInt53" ? "::float8" : ""} as "${field}"`).join(", ");

/** A whole documents row, a DocumentRow as it is. */
const DOCUMENT_ROW = columnsAsFields(documentColumns);

/** The fields a document's metadata view shows (service.ts, documentView); createdAt and id are also a page's keyset position. */
const VIEW_FIELDS = ["id", "name", "description", "tags", "folder", "fileSize", "contentVersion", "createdAt", "updatedAt"] as const;
export type DocumentViewRow = Pick<DocumentRow, (typeof VIEW_FIELDS)[number]>;

/** A view's columns only: a page of 50 reads 9 columns a row instead of 16 (bench/README.md, "The listing reads what it shows"). */
const VIEW_ROW = columnsAsFields(documentColumns.filter(([field]) => (VIEW_FIELDS as readonly string[]).includes(field)));

/** A documents row as `to_json` writes it (column names, numbers as numbers) → the row Drizzle would read. */
export const documentFromJson = (json: Record<string, unknown>) =>
  Object.fromEntries(documentColumns.map(([field, column]) => [field, json[column.name]])) as typeof documents.$inferSelect;

/** Raw: the metadata and download routes' read. $1 id, $2 account. */
export const FIND_ACTIVE = statement<[id: string, accountId: string], DocumentRow>(
  `select ${DOCUMENT_ROW} from documents where id = $1 and ${ACCOUNT_OF_DOCUMENT} = $2 and deleted_at is null`,
);

export interface PageShape {
  deleted: boolean;
  /** one folder ($3): only its documents ("exact"), or also those of its subfolders ("subtree") */
  folder: false | "exact" | "subtree";
  /** after a cursor (the next two parameters: created at, id) */
  after: boolean;
  oldestFirst: boolean;
}

/** $1 account, $2 page size, then the folder ($3) when the shape has one, then the cursor (created at, id) when it has one. */
export type PageParams = [accountId: string, limit: number, ...rest: (string | number)[]];

/** The texts made so far, by shape, one map per column set. */
const rowPages = new Map<string, string>();
const viewPages = new Map<string, string>();

/**
 * Raw: every page of the listing, the trash and export, on the (account, state, created_at, id) indexes.
 * $1 account, $2 page size, then the folder and the cursor when the shape has them. Whole rows (export
 * reads their content), or with pageViewStatement the columns of their views (the listing and the trash).
 *
 * A subtree is read folder by folder, each through the (account, folder, created_at, id) index in page
 * order and stopped after one page, then the pages are merged: a page costs at most a page per folder
 * of the subtree, however many documents it holds. Its folders come from the folders table, which has a
 * row for every folder a document was ever filed in (kiln_create, the update's ensureFolder, and the
 * trigger function kiln_folder_counts); starts_with matches the path literally, `%` and `_` included.
 */
export const pageStatement = (shape: PageShape) => statement<PageParams, DocumentRow>(pageText(shape, DOCUMENT_ROW, rowPages));

/** Raw: the page of pageStatement, each document's view columns only (DocumentViewRow). */
export const pageViewStatement = (shape: PageShape) => statement<PageParams, DocumentViewRow>(pageText(shape, VIEW_ROW, viewPages));

function pageText(shape: PageShape, columns: string, made: Map<string, string>): string {
  const name = JSON.stringify(shape);
  let text = made.get(name);
  if (text === undefined) {
    let next = 3;
    const folderParameter = shape.folder ? `$${next++}` : "";
    const after = shape.after ? ` and (created_at, id) ${shape.oldestFirst ? ">" : "<"} ($${next++}, $${next++})` : "";
    const order = shape.oldestFirst ? "asc" : "desc";
    const state = `deleted_at ${shape.deleted ? "is not null" : "is null"}`;
    if (shape.folder === "subtree") {
      text =
        `select d.* from folders f cross join lateral (select ${columns} from documents` +
        ` where account_id = $1 and folder = f.path and ${state}${after} order by created_at ${order}, id ${order} limit $2) d` +
        ` where f.account_id = $1 and (f.path = ${folderParameter} or starts_with(f.path, ${folderParameter} || '/'))` +
        ` order by d."createdAt" ${order}, d.id ${order} limit $2`;
    } else {
      const folder = shape.folder ? ` and folder = ${folderParameter}` : "";
      text =
        `select ${columns} from documents where account_id = $1 and ${state}` +
        `${folder}${after} order by created_at ${order}, id ${order} limit $2`;
    }
    made.set(name, text);
  }
  return text;
}

/**
 * Raw: the quota pre-check of every write. $1 account; with $2 a document and $3 its next version,
 * also the bytes of the versions that version would push past maxVersions (0 without).
 */
export const ACCOUNT_LIMITS = statement<[accountId: string, documentId: string | null, version: number | null], AccountLimitsRow>(`
  select storage_limit_bytes::float8 as "storageLimitBytes", storage_used_bytes::float8 as "storageUsedBytes",
    max_document_bytes::float8 as "maxDocumentBytes",
    (select coalesce(sum(v.file_size), 0)::float8 from document_versions v
      where $2::text is not null and v.document_id = $2 and v.version <= $3::int - a.max_versions) as "droppableBytes"
  from accounts a where id = $1`);

/**
 * Raw: a call of the plpgsql function `kiln_create` (src/db/sql/functions): the folders, the
 * document, its version 1 and its event, then the storage reservation on the account row, whose refusal raises
 * STORAGE_REFUSED and so writes nothing. $1 account, $2 size, $3 created at, $4 folder paths, $5 id,
 * $6 name, $7 description, $8 tags, $9 folder, $10 hash, $11 content key, $12 updated at, then the query
 * index entries (documents/indexing.ts): $13 the index set, $14 and $15 the entries' indexes and hex keys;
 * $16 unbound: no schema was checked, the account binding no folder as the writer knew (documents/schema-guard.ts).
 */
export const CREATE = statement<
  [
    accountId: string,
    size: number,
    createdAt: number,
    folderPaths: TextArray,
    id: string,
    name: string,
    description: string | null,
    tags: TextArray,
    folder: string | null,
    hash: string,
    contentKey: string,
    updatedAt: number,
    ...IndexParams,
    unbound: boolean,
  ],
  { document: Record<string, unknown> }
>(
  "select kiln_create($1, $2, $3, $4::text[], $5, $6, $7, $8::text[], $9, $10, $11, $12, $13::text[], $14::text[], $15::text[], $16::boolean) as document",
);

/** The SQLSTATE of a refused storage reservation (kiln_reserve_storage); the message names the refusal. */
export const STORAGE_REFUSED = "KL001";

/**
 * Raw: a call of the plpgsql function `kiln_new_version` (src/db/sql/functions), which takes the
 * row lock, checks If-Match, drops old versions, updates the row, writes its event and reserves the storage last
 * (a refusal raises STORAGE_REFUSED) in one round trip.
 * $1 account, $2 document, $3 accepted hashes (text[] or null), $4 size, $5 hash, $6 key, $7 now, then the
 * query index entries: $8 the folder they were computed for, $9 the index set, $10 and $11 the entries;
 * $12 unbound, as for CREATE.
 */
export const NEW_VERSION = statement<
  [
    accountId: string,
    documentId: string,
    acceptedHashes: TextArray | null,
    size: number,
    hash: string,
    key: string,
    now: number,
    folder: string | null,
    ...IndexParams,
    unbound: boolean,
  ],
  { result: Record<string, unknown> }
>("select kiln_new_version($1, $2, $3::text[], $4, $5, $6, $7, $8, $9::text[], $10::text[], $11::text[], $12::boolean) as result");

/**
 * Raw: a job chunk's documents locked in id order, first in its commit (jobs/kinds.ts, lockChunk): each
 * write of a document locks it and then the account row, so the chunk's commits take the same order.
 * `keyShare` for an index build (its entries' foreign keys take that much), `update` for new versions.
 */
const lockDocuments = (strength: "key share" | "update") =>
  statement<[ids: TextArray], { id: string }>(`select id from documents where id = any($1::text[]) order by id for ${strength}`);
export const LOCK_DOCUMENTS = { keyShare: lockDocuments("key share"), update: lockDocuments("update") };

/** A document's query index entries (documents/indexing.ts): the index set, the entries' indexes and hex keys. */
export type IndexParams = [indexIds: TextArray, entryIndexes: TextArray, entryKeys: TextArray];

/**
 * Raw: a document's query index entries replaced after a move or a restore (kiln_index_document), in
 * the change's transaction, or by an index build. $1 account, $2 document, $3 its content hash, $4 folder,
 * $5–$7 the entries, $8 the one index whose entries are replaced (a build), or null for all.
 */
export const INDEX_DOCUMENT = statement<
  [accountId: string, documentId: string, hash: string, folder: string | null, ...IndexParams, only: string | null],
  { indexed: boolean }
>("select kiln_index_document($1, $2, $3, $4, $5::text[], $6::text[], $7::text[], $8) as indexed");

/** What a purge did: how many documents went, which (the accounts and ids, pairwise) and the content keys to remove. */
export interface PurgedRow {
  purged: number;
  accountIds: string[];
  documentIds: string[];
  contentKeys: string[];
}

/**
 * Every purge: the documents `due` selects (locked), with every version, releasing their bytes. The
 * answers kept for Idempotency-Keys that name them are the idempotency module's: the repository's
 * purge hook forgets them in the same transaction.
 */
const purgeOf = <Params extends readonly unknown[]>(due: string) =>
  statement<Params, PurgedRow>(`
  with due as (${due}
  ), gone_versions as (
    delete from document_versions v using due where v.document_id = due.id
    returning due.account_id, v.file_size, v.content_key
  ), gone as (
    delete from documents d using due where d.id = due.id
    returning d.id, d.account_id, d.content_key
  ), freed as (
    update accounts a set storage_used_bytes = a.storage_used_bytes - g.bytes
    from (select account_id, sum(file_size) as bytes from gone_versions group by account_id) g
    where a.id = g.account_id
  )
  select g.purged, g."accountIds", g."documentIds",
    array(select content_key from gone_versions union select content_key from gone) as "contentKeys"
  from (select count(*)::int as purged, coalesce(array_agg(account_id), '{}') as "accountIds",
    coalesce(array_agg(id), '{}') as "documentIds" from gone) g`);

/**
 * Raw: the purge sweep in one statement Drizzle's builder cannot express (data-modifying CTEs with
 * SKIP LOCKED, so several processes sweep one database without waiting on each other). $1 now, $2 batch.
 */
export const PURGE_DUE = purgeOf<[now: number, batch: number]>(`
    select id, account_id from documents where purge_at <= $1
    order by purge_at limit $2 for update skip locked`);

/** Raw: the purge of one soft-deleted document, waiting for its row lock (none when it is not in the trash). $1 id, $2 account. */
export const PURGE_ONE = purgeOf<[id: string, accountId: string]>(`
    select id, account_id from documents where id = $1 and ${ACCOUNT_OF_DOCUMENT} = $2 and deleted_at is not null
    for update`);

/** Raw condition: the account's active documents in the folder or any of its subfolders, given the parameters that hold them ("$1"). */
export const activeInFolderTree = (accountId: string, folder: string) =>
  `account_id = ${accountId} and deleted_at is null and (folder = ${folder} or starts_with(folder, ${folder} || '/'))`;

/** Raw: the active documents of a folder and its subfolders, in the order they were created (an index build's items). */
export const FOLDER_IDS = statement<[accountId: string, folder: string], { id: string }>(`
  select id from documents where ${activeInFolderTree("$1", "$2")}
  order by created_at, id`);
