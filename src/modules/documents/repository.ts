/**
 * SQL for documents and folders. Every query is scoped to an account. Invariants that concurrency could
 * break are kept by the database: the storage quota by one conditional UPDATE on the account row,
 * If-Match and state checks under the document's row lock.
 */
import { and, desc, eq, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { type FolderFilter, folderAndAncestors } from "../../core/metadata";
import type { Db } from "../../db/client";
import { type DocumentRow, type DocumentVersionRow, documents, documentVersions, folders } from "../../db/schema";
import { run, type Statement, type Executor as StatementExecutor } from "../../db/statement";
import { forgetAnswersNaming, type PurgedDocuments } from "../../http/idempotency-repository";
import type { CursorPosition } from "./cursor";
import { type IndexedContent, type IndexOutcome, NO_ENTRIES } from "./indexing";
import {
  indexingRepository,
  indexParams,
  type QuotaRefusal,
  type SchemasChanged,
  type Tx,
  textArray,
  writeRefusal,
} from "./indexing-repository";
import {
  ACCOUNT_LIMITS,
  ACCOUNT_OF_DOCUMENT,
  type AccountLimitsRow,
  CREATE,
  type DocumentViewRow,
  documentFromJson,
  FIND_ACTIVE,
  NEW_VERSION,
  type PageParams,
  type PageShape,
  PURGE_DUE,
  PURGE_ONE,
  type PurgedRow,
  pageStatement,
  pageViewStatement,
} from "./statements";

export type { AccountLimitsRow };
export type Executor = Db | Tx;
export type NewDocument = typeof documents.$inferInsert;
/** What a create writes: every column a new document needs, defaults and state (revision, deletedAt, …) aside. */
export type NewDocumentRow = Required<
  Pick<
    NewDocument,
    "id" | "accountId" | "name" | "description" | "tags" | "folder" | "fileSize" | "contentHash" | "contentKey" | "createdAt" | "updatedAt"
  >
>;

/**
 * An id no document can have matches nothing (404) rather than failing the query (500): PostgreSQL text
 * cannot hold U+0000, and Elysia hands over null for a path segment that is not valid percent-encoded UTF-8.
 */
const isDocumentId = (id: string | null): id is string => typeof id === "string" && !id.includes("\u0000");
/** The account compared as an expression (statements.ts, ACCOUNT_OF_DOCUMENT): every plan finds a document by its primary key. */
const ofAccount = (accountId: string) => sql`${sql.raw(ACCOUNT_OF_DOCUMENT)} = ${accountId}`;
const owned = (accountId: string, id: string | null) => (isDocumentId(id) ? and(eq(documents.id, id), ofAccount(accountId)) : sql`false`);
const active = isNull(documents.deletedAt);
const deleted = isNotNull(documents.deletedAt);

export type { QuotaRefusal, Tx };

export interface NewVersionInput {
  accountId: string;
  documentId: string;
  /** the content hashes If-Match accepts, or null for any */
  acceptedHashes: string[] | null;
  size: number;
  hash: string;
  key: string;
  now: number;
  /** the new content's query index entries (none when left out: an account without indexes) */
  indexed?: IndexedContent;
  /** no schema was checked, the account binding no folder as the writer knew: refused (schemas_changed) if it binds one now */
  unbound?: boolean;
}

export type NewVersionOutcome =
  | { outcome: "stored"; document: DocumentRow; released: string[] }
  | { outcome: "not_found" }
  | { outcome: "precondition_failed"; contentHash: string }
  | { outcome: QuotaRefusal }
  | IndexOutcome
  | SchemasChanged;

/**
 * What else goes with a purged document, in the purge's transaction, on its connection: another module's
 * rows that name it (by default, the Idempotency-Key answers that may carry its content).
 */
export type PurgeHook = (tx: StatementExecutor, purged: PurgedDocuments) => Promise<void>;

/** Every purge: the statement (PURGE_ONE or PURGE_DUE), then the hook, in one transaction. */
const purgeWith = <Params extends readonly unknown[]>(
  db: Db,
  onPurged: PurgeHook,
  statement: Statement<Params, PurgedRow>,
  params: Params,
): Promise<PurgedRow> =>
  db.$client.begin(async (tx) => {
    const [row] = await run(tx, statement, params);
    if (row.purged > 0) await onPurged(tx, row);
    return row;
  });

/** A page of documents: live or deleted, of a folder or its subtree, after a cursor, newest or oldest first. */
export interface PageOptions {
  deleted: boolean;
  folder?: FolderFilter;
  after?: CursorPosition;
  limit: number;
  oldestFirst?: boolean;
}

function pageQuery(accountId: string, options: PageOptions): { shape: PageShape; params: PageParams } {
  const shape: PageShape = {
    deleted: options.deleted,
    folder: options.folder === undefined ? false : options.folder.subfolders ? "subtree" : "exact",
    after: options.after !== undefined,
    oldestFirst: options.oldestFirst === true,
  };
  const params: PageParams = [accountId, options.limit];
  if (options.folder !== undefined) params.push(options.folder.path);
  if (options.after) params.push(options.after.createdAt, options.after.id);
  return { shape, params };
}

export const documentsRepository = (db: Db, onPurged: PurgeHook = forgetAnswersNaming) => ({
  ...indexingRepository(db),
  transaction: <T>(work: (tx: Tx) => Promise<T>) => db.transaction(work),

  /** The account's limits; with a document, also what its next version would release. */
  async limits(accountId: string, next?: { documentId: string; version: number }): Promise<AccountLimitsRow | undefined> {
    return (await run(db, ACCOUNT_LIMITS, [accountId, next?.documentId ?? null, next?.version ?? null]))[0];
  },

  async findActive(accountId: string, id: string): Promise<DocumentRow | undefined> {
    return isDocumentId(id) ? (await run(db, FIND_ACTIVE, [id, accountId]))[0] : undefined;
  },

  /** An active document by id alone, whatever its account: for signed links, which carry no key. */
  async findActiveById(id: string): Promise<DocumentRow | undefined> {
    if (id.includes("\u0000")) return undefined;
    const [row] = await db
      .select()
      .from(documents)
      .where(and(eq(documents.id, id), active));
    return row;
  },

  async lockActive(tx: Tx, accountId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await tx
      .select()
      .from(documents)
      .where(and(owned(accountId, id), active))
      .for("update");
    return row;
  },

  /** The account's active documents with these ids, in no order (a query's page). */
  async activeByIds(accountId: string, ids: string[]): Promise<DocumentRow[]> {
    if (ids.length === 0) return [];
    return db
      .select()
      .from(documents)
      .where(and(eq(documents.accountId, accountId), inArray(documents.id, ids), isNull(documents.deletedAt)));
  },

  /** Which of these documents the account has, not deleted: a replay of a kept answer checks its documents (http/idempotency.ts). */
  async presentIds(accountId: string, ids: string[]): Promise<string[]> {
    const rows = await db
      .select({ id: documents.id })
      .from(documents)
      .where(and(eq(documents.accountId, accountId), inArray(documents.id, ids), isNull(documents.deletedAt)));
    return rows.map((row) => row.id);
  },

  /** The ids of the active documents of a folder and its subfolders, oldest first, at most `limit` (a job's source). */
  async idsInFolder(accountId: string, folder: string, limit: number): Promise<string[]> {
    const rows = await db
      .select({ id: documents.id })
      .from(documents)
      .where(
        and(
          eq(documents.accountId, accountId),
          active,
          sql`(${documents.folder} = ${folder} or starts_with(${documents.folder}, ${`${folder}/`}))`,
        ),
      )
      .orderBy(documents.createdAt, documents.id)
      .limit(limit);
    return rows.map((row) => row.id);
  },

  async exists(accountId: string, id: string, tx: Executor = db): Promise<{ deleted: boolean } | undefined> {
    const [row] = await tx.select({ deletedAt: documents.deletedAt }).from(documents).where(owned(accountId, id));
    return row && { deleted: row.deletedAt !== null };
  },

  /**
   * A new document with its version 1 and its folders, in one statement that commits on its own, the
   * storage reservation last (one conditional UPDATE on the account row, so concurrent creates can never
   * pass the limit together; the row lock it takes is held only for the reservation and the commit). A
   * refusal writes nothing. `on`: a transaction's connection, for a write that must commit with another
   * module's rows (a job marks its item done in the same transaction); a refusal then aborts it.
   * `unbound`: as NewVersionInput's.
   */
  async create(
    document: NewDocumentRow,
    indexed: IndexedContent = NO_ENTRIES(document.folder),
    on: StatementExecutor = db,
    unbound = false,
  ): Promise<{ outcome: "stored"; document: DocumentRow } | { outcome: QuotaRefusal } | IndexOutcome | SchemasChanged> {
    const folderPaths = document.folder ? folderAndAncestors(document.folder) : [];
    try {
      const [row] = await run(on, CREATE, [
        document.accountId,
        document.fileSize,
        document.createdAt,
        textArray(folderPaths),
        document.id,
        document.name,
        document.description,
        textArray(document.tags),
        document.folder,
        document.contentHash,
        document.contentKey,
        document.updatedAt,
        ...indexParams(indexed),
        unbound,
      ]);
      return { outcome: "stored", document: documentFromJson(row.document) };
    } catch (error) {
      return writeRefusal(error);
    }
  },

  /**
   * A new current version in one call of `kiln_new_version` (statements.ts, NEW_VERSION): the
   * document's row lock, If-Match, the reservation, the versions dropped, the row updated. It commits
   * on its own, so no lock outlives the call's round trip; or, `on` a transaction's connection, with it.
   */
  async newVersion(input: NewVersionInput, on: StatementExecutor = db): Promise<NewVersionOutcome> {
    if (!isDocumentId(input.documentId)) return { outcome: "not_found" };
    let result: Record<string, unknown>;
    try {
      [{ result }] = await run(on, NEW_VERSION, [
        input.accountId,
        input.documentId,
        input.acceptedHashes === null ? null : textArray(input.acceptedHashes),
        input.size,
        input.hash,
        input.key,
        input.now,
        input.indexed?.folder ?? null,
        ...indexParams(input.indexed ?? NO_ENTRIES(null)),
        input.unbound ?? false,
      ]);
    } catch (error) {
      return writeRefusal(error);
    }
    if (result.outcome === "stored")
      return {
        outcome: "stored",
        document: documentFromJson(result.document as Record<string, unknown>),
        released: result.released as string[],
      };
    return result as NewVersionOutcome;
  },

  async ensureFolder(tx: Tx, accountId: string, folder: string | null | undefined, now: number): Promise<void> {
    if (!folder) return;
    const rows = folderAndAncestors(folder).map((path) => ({ accountId, path, createdAt: now }));
    await tx.insert(folders).values(rows).onConflictDoNothing();
  },

  async update(tx: Tx, id: string, changes: Partial<NewDocument>): Promise<DocumentRow> {
    const [row] = await tx
      .update(documents)
      .set({ ...changes, revision: sql`${documents.revision} + 1` })
      .where(eq(documents.id, id))
      .returning();
    return row;
  },

  /** Newest first, `limit` versions older than `before`. */
  async versions(documentId: string, options: { before?: number; limit: number }): Promise<DocumentVersionRow[]> {
    const conditions = [
      eq(documentVersions.documentId, documentId),
      ...(options.before !== undefined ? [lt(documentVersions.version, options.before)] : []),
    ];
    return db
      .select()
      .from(documentVersions)
      .where(and(...conditions))
      .orderBy(desc(documentVersions.version))
      .limit(options.limit);
  },

  async version(documentId: string, version: number): Promise<DocumentVersionRow | undefined> {
    const [row] = await db
      .select()
      .from(documentVersions)
      .where(and(eq(documentVersions.documentId, documentId), eq(documentVersions.version, version)));
    return row;
  },

  /** A document in the trash or not, by id in the account. */
  async find(accountId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await db.select().from(documents).where(owned(accountId, id));
    return row;
  },

  async restore(tx: Executor, accountId: string, id: string): Promise<DocumentRow | undefined> {
    const [row] = await tx
      .update(documents)
      .set({
        deletedAt: null,
        purgeAt: null,
        revision: sql`${documents.revision} + 1`,
        linkGeneration: sql`${documents.linkGeneration} + 1`,
      })
      .where(and(owned(accountId, id), deleted))
      .returning();
    return row;
  },

  /**
   * Deletes a soft-deleted document with every version and releases their bytes, in its own transaction
   * (waiting for the document's row lock); returns their content keys, or undefined when it is not in the trash.
   */
  async purge(accountId: string, id: string): Promise<string[] | undefined> {
    if (!isDocumentId(id)) return undefined;
    const row = await purgeWith(db, onPurged, PURGE_ONE, [id, accountId]);
    return row.purged > 0 ? row.contentKeys : undefined;
  },

  /**
   * Purges up to `batch` documents whose purgeAt has passed, with every version, releasing their bytes;
   * returns how many and the content keys to remove. SKIP LOCKED lets several processes sweep one
   * database without waiting on each other.
   */
  async purgeDue(now: number, batch: number): Promise<{ purged: number; contentKeys: string[] }> {
    const row = await purgeWith(db, onPurged, PURGE_DUE, [now, batch]);
    return { purged: row.purged, contentKeys: row.contentKeys };
  },

  /** Newest first, or oldest first (an export, so that an import recreates them in order). */
  async list(accountId: string, options: PageOptions): Promise<DocumentRow[]> {
    const { shape, params } = pageQuery(accountId, options);
    return run(db, pageStatement(shape), params);
  },

  /** The same page as `list` with the columns of the documents' views only (the listing and the trash). */
  async listViews(accountId: string, options: PageOptions): Promise<DocumentViewRow[]> {
    const { shape, params } = pageQuery(accountId, options);
    return run(db, pageViewStatement(shape), params);
  },

  /** The account's folders with their counts, kept by a trigger (see folders.documentCount): no document is read. */
  async folders(accountId: string): Promise<{ path: string; documentCount: number; createdAt: number }[]> {
    return db
      .select({ path: folders.path, documentCount: folders.documentCount, createdAt: folders.createdAt })
      .from(folders)
      .where(eq(folders.accountId, accountId))
      .orderBy(folders.path);
  },

  /** Which of these content keys some document or kept version still points at. */
  async referencedKeys(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const current = await db.select({ key: documents.contentKey }).from(documents).where(inArray(documents.contentKey, keys));
    const kept = await db
      .select({ key: documentVersions.contentKey })
      .from(documentVersions)
      .where(inArray(documentVersions.contentKey, keys));
    return new Set([...current, ...kept].map((row) => row.key));
  },
});

export type DocumentsRepository = ReturnType<typeof documentsRepository>;
