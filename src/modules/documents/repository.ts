/**
 * SQL for documents and folders. Every query is scoped to an account. Invariants that concurrency could
 * break are kept by the database: the storage quota by one conditional UPDATE on the account row,
 * If-Match and state checks under the document's row lock.
 */
import { and, asc, desc, eq, getTableColumns, inArray, isNotNull, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { accounts, documents, documentVersions, folders, idempotencyKeys, type DocumentRow, type DocumentVersionRow } from "../../db/schema";
import type { CursorPosition } from "./cursor";
import { folderAndAncestors } from "../../core/metadata";

export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type Executor = Db | Tx;
export type NewDocument = typeof documents.$inferInsert;
/** What a create writes: every column a new document needs, defaults and state (revision, deletedAt, …) aside. */
export type NewDocumentRow = Required<Pick<NewDocument, "id" | "accountId" | "name" | "description" | "tags" | "folder" | "fileSize" | "contentHash" | "contentKey" | "createdAt" | "updatedAt">>;

/**
 * An id no document can have matches nothing (404) rather than failing the query (500): PostgreSQL text
 * cannot hold U+0000, and Elysia hands over null for a path segment that is not valid percent-encoded UTF-8.
 */
const isDocumentId = (id: string | null): id is string => typeof id === "string" && !id.includes("\u0000");
/**
 * The account is compared as an expression, not as an indexable column, so that every plan finds a
 * document by its primary key: a generic plan cached while the table was small may otherwise look it up
 * through an account index and, once the account holds thousands of documents, scan them all on every
 * call (bench/README.md, "Plans cached while the table was small").
 */
const ofAccount = (accountId: string) => sql`${documents.accountId} || '' = ${accountId}`;
const owned = (accountId: string, id: string | null) =>
  (isDocumentId(id) ? and(eq(documents.id, id), ofAccount(accountId)) : sql`false`);
const active = isNull(documents.deletedAt);
const deleted = isNotNull(documents.deletedAt);

export type QuotaRefusal = "document_too_large" | "storage_limit_exceeded";

export interface NewVersionInput {
  accountId: string;
  documentId: string;
  /** the content hashes If-Match accepts, or null for any */
  acceptedHashes: string[] | null;
  size: number;
  hash: string;
  key: string;
  now: number;
}

export type NewVersionOutcome =
  | { outcome: "stored"; document: DocumentRow; released: string[] }
  | { outcome: "not_found" }
  | { outcome: "precondition_failed"; contentHash: string }
  | { outcome: QuotaRefusal };

/** A text[] parameter (Drizzle would spread a plain array into a list of parameters). */
const textArray = (values: string[]) => documents.tags.mapToDriverValue(values) as string;

const documentColumns = Object.entries(getTableColumns(documents));

/** A documents row as `to_json` writes it (column names, numbers as numbers) → the row Drizzle would read. */
const documentFromJson = (json: Record<string, unknown>) =>
  Object.fromEntries(documentColumns.map(([field, column]) => [field, json[column.name]])) as DocumentRow;

export interface AccountLimitsRow {
  storageLimitBytes: number | null;
  storageUsedBytes: number;
  maxDocumentBytes: number | null;
  /** bytes of the versions a new version of the document would drop (maxVersions) */
  droppableBytes: number;
}

/**
 * A documents row's columns under the names and with the types Drizzle gives them: bigint as float8,
 * exact below 2^53 as Drizzle's number mode assumes. postgres.js then hands back DocumentRows as they
 * are, where Drizzle would map every column of every row in JavaScript (a page of 50: 89–136 µs of CPU
 * against 55–76 µs: bench/README.md, "Third sitting", Drizzle's share).
 */
const DOCUMENT_ROW = documentColumns
  .map(([field, column]) => `${column.name}${column.columnType === "PgBigInt53" ? "::float8" : ""} as "${field}"`)
  .join(", ");

/** Newest first, a page after the cursor ($3, $4) if given; $1 the account, $2 the page size. */
export const pageSql = (state: "deleted" | "active", after: boolean) =>
  `select ${DOCUMENT_ROW} from documents where account_id = $1 and deleted_at ${state === "deleted" ? "is not null" : "is null"}` +
  `${after ? " and (created_at, id) < ($3, $4)" : ""} order by created_at desc, id desc limit $2`;

/**
 * A create in one statement: the reservation on the account row gates the folder, document and first
 * version inserts, so a refusal writes nothing. Its text is fixed, so it is written once here rather
 * than assembled by Drizzle's builder on every create. $1 account, $2 size, $3 created at, $4 folder
 * paths, $5 id, $6 name, $7 description, $8 tags, $9 folder, $10 hash, $11 content key, $12 updated at.
 */
const CREATE_SQL = `
  with reserved as (
    update accounts set storage_used_bytes = storage_used_bytes + $2
    where id = $1
      and (max_document_bytes is null or $2 <= max_document_bytes)
      and (storage_limit_bytes is null or storage_used_bytes + $2 <= storage_limit_bytes)
    returning id
  ), new_folders as (
    insert into folders (account_id, path, created_at)
    select reserved.id, path, $3::bigint from reserved, unnest($4::text[]) as path
    on conflict do nothing
  ), inserted as (
    insert into documents (id, account_id, name, description, tags, folder, file_size, content_hash, content_key, created_at, updated_at)
    select $5, reserved.id, $6, $7, $8::text[], $9, $2::bigint, $10, $11, $3::bigint, $12::bigint
    from reserved
    returning *
  ), first_version as (
    insert into document_versions (document_id, version, file_size, content_hash, content_key, created_at)
    select id, 1, file_size, content_hash, content_key, created_at from inserted
  )
  select (select to_json(inserted) from inserted) as document,
    (select max_document_bytes from accounts where id = $1)::float8 as max_document_bytes`;

/**
 * The statements of the hottest routes (metadata, download, a page of the listing, the quota
 * pre-check), built once: Drizzle's query builder otherwise assembles the same SQL text on every call,
 * a measurable share of a metadata read's CPU (bench/README.md, "SQL built once"). The document reads
 * go to postgres.js directly (see DOCUMENT_ROW); the account is compared as an expression there too.
 */
const preparedByDb = new WeakMap<Db, ReturnType<typeof prepareReads>>();

function preparedReads(db: Db): ReturnType<typeof prepareReads> {
  let reads = preparedByDb.get(db);
  if (!reads) preparedByDb.set(db, (reads = prepareReads(db)));
  return reads;
}

function prepareReads(db: Db) {
  const rows = (text: string) => (params: (string | number)[]) => db.$client.unsafe(text, params) as unknown as Promise<DocumentRow[]>;
  const pages = (state: "deleted" | "active") => ({ first: rows(pageSql(state, false)), after: rows(pageSql(state, true)) });
  return {
    limits: db.select({
      storageLimitBytes: accounts.storageLimitBytes,
      storageUsedBytes: accounts.storageUsedBytes,
      maxDocumentBytes: accounts.maxDocumentBytes,
      droppableBytes: sql<number>`0::float8`,
    }).from(accounts).where(eq(accounts.id, sql.placeholder("accountId"))).prepare("documents_account_limits"),
    findActive: rows(`select ${DOCUMENT_ROW} from documents where id = $1 and account_id || '' = $2 and deleted_at is null`),
    activePages: pages("active"),
    deletedPages: pages("deleted"),
  };
}

export const documentsRepository = (db: Db) => ({
  transaction: <T>(work: (tx: Tx) => Promise<T>) => db.transaction(work),

  /** The account's limits; with a document, also what its next version would release. */
  async limits(accountId: string, next?: { documentId: string; version: number }): Promise<AccountLimitsRow | undefined> {
    if (!next) return (await preparedReads(db).limits.execute({ accountId }))[0];
    const droppable = sql<number>`(select coalesce(sum(${documentVersions.fileSize}), 0)::float8 from ${documentVersions} where ${documentVersions.documentId} = ${next.documentId} and ${documentVersions.version} <= ${next.version} - ${accounts.maxVersions})`;
    const [row] = await db.select({
      storageLimitBytes: accounts.storageLimitBytes,
      storageUsedBytes: accounts.storageUsedBytes,
      maxDocumentBytes: accounts.maxDocumentBytes,
      droppableBytes: droppable,
    }).from(accounts).where(eq(accounts.id, accountId));
    return row;
  },

  async findActive(accountId: string, id: string, tx: Executor = db): Promise<DocumentRow | undefined> {
    if (tx === db) return isDocumentId(id) ? (await preparedReads(db).findActive([id, accountId]))[0] : undefined;
    const [row] = await tx.select().from(documents).where(and(owned(accountId, id), active));
    return row;
  },

  /** An active document by id alone, whatever its account: for signed links, which carry no key. */
  async findActiveById(id: string): Promise<DocumentRow | undefined> {
    if (id.includes("\u0000")) return undefined;
    const [row] = await db.select().from(documents).where(and(eq(documents.id, id), active));
    return row;
  },

  async lockActive(tx: Tx, accountId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await tx.select().from(documents).where(and(owned(accountId, id), active)).for("update");
    return row;
  },

  async exists(accountId: string, id: string, tx: Executor = db): Promise<{ deleted: boolean } | undefined> {
    const [row] = await tx.select({ deletedAt: documents.deletedAt }).from(documents).where(owned(accountId, id));
    return row && { deleted: row.deletedAt !== null };
  },

  /**
   * A new document with its version 1 and its folders, in one statement that commits on its own: the
   * storage reservation (one conditional UPDATE on the account row, so concurrent creates can never pass
   * the limit together) gates the inserts, and a refusal writes nothing.
   */
  async create(document: NewDocumentRow): Promise<{ outcome: "stored"; document: DocumentRow } | { outcome: QuotaRefusal }> {
    const size = document.fileSize;
    const folderPaths = document.folder ? folderAndAncestors(document.folder) : [];
    const [row] = await db.$client.unsafe(CREATE_SQL, [
      document.accountId, size, document.createdAt, textArray(folderPaths), document.id, document.name, document.description,
      textArray(document.tags), document.folder, document.contentHash, document.contentKey, document.updatedAt,
    ]) as unknown as { document: Record<string, unknown> | null; max_document_bytes: number | null }[];
    if (row.document) return { outcome: "stored", document: documentFromJson(row.document) };
    return { outcome: row.max_document_bytes !== null && size > row.max_document_bytes ? "document_too_large" : "storage_limit_exceeded" };
  },

  /**
   * A new current version in one call of `kiln_new_version` (drizzle/0005_new_version.sql): the
   * document's row lock, If-Match, the reservation, the versions dropped, the row updated.
   * Outside a transaction it commits on its own, so no lock outlives the call's round trip.
   */
  async newVersion(input: NewVersionInput, executor: Executor = db): Promise<NewVersionOutcome> {
    if (!isDocumentId(input.documentId)) return { outcome: "not_found" };
    const [row] = await executor.execute<{ result: Record<string, unknown> }>(sql`select kiln_new_version(${input.accountId}, ${input.documentId}, ${input.acceptedHashes === null ? null : textArray(input.acceptedHashes)}::text[], ${input.size}, ${input.hash}, ${input.key}, ${input.now}) as result`);
    const result = row.result;
    if (result.outcome === "stored") return { outcome: "stored", document: documentFromJson(result.document as Record<string, unknown>), released: result.released as string[] };
    return result as NewVersionOutcome;
  },

  async ensureFolder(tx: Tx, accountId: string, folder: string | null | undefined, now: number): Promise<void> {
    if (!folder) return;
    const rows = folderAndAncestors(folder).map((path) => ({ accountId, path, createdAt: now }));
    await tx.insert(folders).values(rows).onConflictDoNothing();
  },

  async update(tx: Tx, id: string, changes: Partial<NewDocument>): Promise<DocumentRow> {
    const [row] = await tx.update(documents).set({ ...changes, revision: sql`${documents.revision} + 1` }).where(eq(documents.id, id)).returning();
    return row;
  },

  /** Newest first, `limit` versions older than `before`. */
  async versions(documentId: string, options: { before?: number; limit: number }): Promise<DocumentVersionRow[]> {
    const conditions = [eq(documentVersions.documentId, documentId), ...(options.before !== undefined ? [lt(documentVersions.version, options.before)] : [])];
    return db.select().from(documentVersions).where(and(...conditions)).orderBy(desc(documentVersions.version)).limit(options.limit);
  },

  async version(documentId: string, version: number): Promise<DocumentVersionRow | undefined> {
    const [row] = await db.select().from(documentVersions).where(and(eq(documentVersions.documentId, documentId), eq(documentVersions.version, version)));
    return row;
  },

  async restore(accountId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await db.update(documents)
      .set({ deletedAt: null, purgeAt: null, revision: sql`${documents.revision} + 1`, linkGeneration: sql`${documents.linkGeneration} + 1` })
      .where(and(owned(accountId, id), deleted))
      .returning();
    return row;
  },

  /** Deletes a soft-deleted document with every version and releases their bytes; returns their content keys. */
  async purge(tx: Tx, accountId: string, id: string): Promise<string[] | undefined> {
    const [row] = await tx.select({ id: documents.id }).from(documents).where(and(owned(accountId, id), deleted)).for("update");
    if (!row) return undefined;
    const versions = await tx.delete(documentVersions).where(eq(documentVersions.documentId, id)).returning({ size: documentVersions.fileSize, contentKey: documentVersions.contentKey });
    const [document] = await tx.delete(documents).where(eq(documents.id, id)).returning({ contentKey: documents.contentKey });
    // kept Idempotency-Key answers that name the document may carry its content
    await tx.delete(idempotencyKeys).where(and(eq(idempotencyKeys.accountId, accountId), sql`${idempotencyKeys.replayRequires}->'documentIds' ? ${id}`));
    const released = versions.reduce((sum, version) => sum + version.size, 0);
    await tx.update(accounts).set({ storageUsedBytes: sql`${accounts.storageUsedBytes} - ${released}` }).where(eq(accounts.id, accountId));
    return [...new Set([document.contentKey, ...versions.map((version) => version.contentKey)])];
  },

  /**
   * Purges up to `batch` documents whose purgeAt has passed, with every version, releasing their bytes,
   * in one statement; returns how many and the content keys to remove. SKIP LOCKED lets several
   * processes sweep one database without waiting on each other.
   */
  async purgeDue(now: number, batch: number): Promise<{ purged: number; contentKeys: string[] }> {
    const [row] = await db.execute<{ purged: number; content_keys: string[] }>(sql`
      with due as (
        select id, account_id from ${documents} where ${documents.purgeAt} <= ${now}
        order by ${documents.purgeAt} limit ${batch} for update skip locked
      ), gone_versions as (
        delete from ${documentVersions} v using due where v.document_id = due.id
        returning due.account_id, v.file_size, v.content_key
      ), gone as (
        delete from ${documents} d using due where d.id = due.id
        returning d.content_key
      ), forgotten as (
        delete from ${idempotencyKeys} k using due where k.account_id = due.account_id and k.replay_requires->'documentIds' ? due.id
      ), freed as (
        update ${accounts} a set storage_used_bytes = a.storage_used_bytes - g.bytes
        from (select account_id, sum(file_size) as bytes from gone_versions group by account_id) g
        where a.id = g.account_id
      )
      select (select count(*) from gone)::int as purged,
        array(select content_key from gone_versions union select content_key from gone) as content_keys`);
    return { purged: row.purged, contentKeys: row.content_keys };
  },

  /** Newest first (the listing), or oldest first (an export, so that an import recreates them in order). */
  async list(accountId: string, options: { deleted: boolean; folder?: string; after?: CursorPosition; limit: number; oldestFirst?: boolean }): Promise<DocumentRow[]> {
    if (!options.oldestFirst && options.folder === undefined) {
      const reads = preparedReads(db);
      const pages = options.deleted ? reads.deletedPages : reads.activePages;
      return options.after
        ? pages.after([accountId, options.limit, options.after.createdAt, options.after.id])
        : pages.first([accountId, options.limit]);
    }
    const conditions: (SQL | undefined)[] = [eq(documents.accountId, accountId), options.deleted ? deleted : active];
    if (options.folder !== undefined) conditions.push(eq(documents.folder, options.folder));
    const order = options.oldestFirst ? asc : desc;
    if (options.after) {
      conditions.push(options.oldestFirst
        ? sql`(${documents.createdAt}, ${documents.id}) > (${options.after.createdAt}, ${options.after.id})`
        : sql`(${documents.createdAt}, ${documents.id}) < (${options.after.createdAt}, ${options.after.id})`);
    }
    return db.select().from(documents).where(and(...conditions)).orderBy(order(documents.createdAt), order(documents.id)).limit(options.limit);
  },

  /** The account's folders with their counts, kept by a trigger (see folders.documentCount): no document is read. */
  async folders(accountId: string): Promise<{ path: string; documentCount: number; createdAt: number }[]> {
    return db.select({ path: folders.path, documentCount: folders.documentCount, createdAt: folders.createdAt })
      .from(folders)
      .where(eq(folders.accountId, accountId))
      .orderBy(folders.path);
  },

  /** Which of these content keys some document or kept version still points at. */
  async referencedKeys(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const current = await db.select({ key: documents.contentKey }).from(documents).where(inArray(documents.contentKey, keys));
    const kept = await db.select({ key: documentVersions.contentKey }).from(documentVersions).where(inArray(documentVersions.contentKey, keys));
    return new Set([...current, ...kept].map((row) => row.key));
  },
});

export type DocumentsRepository = ReturnType<typeof documentsRepository>;
