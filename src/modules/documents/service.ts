/**
 * The rules of the Documents API. Content is written to the store first (a new file per version) and
 * the row is pointed at it in a transaction; a file the row no longer names is removed after the commit,
 * and whatever a crash leaves behind is collected by the orphan sweep.
 */

import { ERRORS } from "../../core/error-codes";
import { type FieldError, HttpError, httpError, validationError } from "../../core/errors";
import { CheckedJson, parseJsonBytes } from "../../core/json/parse";
import type { PatchJob } from "../../core/json/patch";
import { memberValueSpan } from "../../core/json/span";
import { newId } from "../../core/keys";
import { type MetadataInput, normalizeMetadata } from "../../core/metadata";
import type { DocumentRow } from "../../db/schema";
import type { ContentStore, OpenedContent, StoredContent } from "../../storage/content-store";
import { contentETag, ifMatchAllows, ifMatchContentHashes, metadataETag } from "./etag";
import { entriesIfIndexed, type IndexedContent, type Indexer, type IndexOutcome, indexConflict, NO_INDEXES } from "./indexing";
import type { SchemasChanged } from "./indexing-repository";
import { CHECK_BEFORE_WRITING_ABOVE, checkQuota, precheckQuota, quotaError } from "./quota";
import { type DocumentsRepository, documentsRepository, type Tx } from "./repository";
import { ContentRetirer } from "./retirer";
import * as guard from "./schema-guard";
import type { DocumentViewRow } from "./statements";
import { Turns } from "./turns";

export interface DocumentsDeps {
  repository: DocumentsRepository;
  store: ContentStore;
  /** removes replaced content, a while after the replacement committed (a crash in between leaves it to the orphan sweep) */
  retirer: ContentRetirer;
  now: () => number;
  purgeAfterMs: number;
  /** applies (or, without a document, only reads) a patch of the account's off the main thread; undefined: on the calling thread */
  patchWorker?: (accountId: string, job: PatchJob) => Promise<Uint8Array>;
  /** derived versions of one document (patches) are built one at a time in this process (deriveNewVersion) */
  deriveTurns: Turns;
  /** the folders' JSON Schemas (src/modules/schemas), asked before any content is written; undefined: none */
  schemaGuard?: guard.SchemaGuard;
  /** the query indexes' entries of new content (modules/query passes it in; documents/indexing.ts) */
  indexer: Indexer;
}

export function documentsDeps(options: {
  db: Parameters<typeof documentsRepository>[0];
  store: ContentStore;
  now?: () => number;
  purgeAfterMs: number;
  patchWorker?: DocumentsDeps["patchWorker"];
  schemaGuard?: guard.SchemaGuard;
  indexer?: Indexer;
}): DocumentsDeps {
  return {
    repository: documentsRepository(options.db),
    store: options.store,
    retirer: new ContentRetirer(options.store),
    now: options.now ?? Date.now,
    purgeAfterMs: options.purgeAfterMs,
    patchWorker: options.patchWorker,
    deriveTurns: new Turns(),
    schemaGuard: options.schemaGuard,
    indexer: options.indexer ?? NO_INDEXES,
  };
}

/** The fields of a document its metadata view shows (an event keeps these, src/modules/events). */
export type DocumentViewFields = DocumentViewRow;

export const documentView = (row: DocumentViewFields) => ({
  id: row.id,
  name: row.name,
  title: row.name,
  // JSON leaves out a member whose value is undefined, as the view leaves out a null description (and
  // one object shape for every view is cheaper to build than a spread of an optional member)
  description: row.description ?? undefined,
  tags: row.tags,
  folder: row.folder,
  fileSize: row.fileSize,
  version: row.contentVersion,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export const documentNotFound = (id: string) => httpError(ERRORS.document_not_found, `No document with id '${id}'`);
export const documentNotDeleted = (id: string) =>
  httpError(ERRORS.document_not_deleted, `Document '${id}' is not deleted; delete it first (DELETE /api/v1/documents/${id})`);
export const preconditionFailed = (current: string) =>
  httpError(ERRORS.precondition_failed, `If-Match does not match the current ETag ${current}`);

/**
 * Writes new content, runs the transaction that adopts it, and removes the file again when the
 * transaction refused it. After any other failure (a lost connection during COMMIT, say) the row may
 * or may not name the file, so it is left to the orphan sweep, which removes only unreferenced files.
 */
async function withStoredContent<T>(deps: DocumentsDeps, bytes: Uint8Array, adopt: (stored: StoredContent) => Promise<T>): Promise<T> {
  const stored = await deps.store.put(bytes);
  try {
    return await adopt(stored);
  } catch (error) {
    if (error instanceof HttpError) await deps.store.remove(stored.key).catch(() => {});
    throw error;
  }
}

/**
 * What a content write takes for true of its account when it commits, for its statement to make sure
 * of under the account's row lock: the entries of its bytes for the account's indexes and the folder,
 * and whether the account binds no folder to a schema (SchemaGuard).
 */
interface WriteAssumptions {
  indexed: IndexedContent;
  unbound: boolean;
}

/** Thrown by a commit whose statement found an assumption no longer true (unlessStale): storeAndCommit starts afresh. */
class StaleAssumptions extends Error {}

/**
 * A write statement's outcome, unless it refused for a stale assumption (an index created or dropped,
 * the document moved, a folder bound meanwhile: StaleAssumptions) or for a unique index's duplicate key (its 409).
 */
function unlessStale<R extends { outcome: string }>(result: R | IndexOutcome | SchemasChanged): R {
  if (result.outcome === "index_set_changed" || result.outcome === "schemas_changed") throw new StaleAssumptions();
  if (result.outcome === "index_conflict") {
    const { index, document } = result as Extract<IndexOutcome, { outcome: "index_conflict" }>;
    throw indexConflict(index, document);
  }
  return result as R;
}

/** How many times a write commits again because the account's indexes or schema bindings changed under it, before 409. */
const COMMIT_ATTEMPTS = 5;

/**
 * Every content write: the folder's schema checks `bytes` (a refusal stores nothing), they are stored,
 * and `commit` runs with the write's assumptions. When its statement finds one stale (StaleAssumptions),
 * the write reads the account's indexes, its schema bindings and the folder afresh, checks the stored
 * bytes again (a refusal now removes them) and commits again, at most COMMIT_ATTEMPTS times, then 409
 * edit_conflict with nothing written. `folder(fresh)`: the folder the content goes to, read again when
 * fresh; the check and the entries share one read per attempt.
 */
async function storeAndCommit<T>(
  deps: DocumentsDeps,
  accountId: string,
  folder: (fresh: boolean) => string | null | Promise<string | null>,
  bytes: Uint8Array,
  commit: (stored: StoredContent, assumed: WriteAssumptions) => Promise<T>,
): Promise<{ committed: T; warnings?: guard.SchemaWarnings }> {
  const folderFor = (fresh: boolean) => {
    let read: Promise<string | null> | undefined;
    return () => (read ??= Promise.resolve(folder(fresh)));
  };
  let where = folderFor(false);
  let checked = await guard.checkedForWrite(deps.schemaGuard, accountId, where, bytes, false);
  const committed = await withStoredContent(deps, bytes, async (stored) => {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const fresh = attempt > 0;
      if (fresh) {
        where = folderFor(true);
        checked = await guard.checkedForWrite(deps.schemaGuard, accountId, where, bytes, true);
      }
      const indexed = await entriesIfIndexed(deps.indexer, accountId, where, bytes, fresh);
      try {
        return await commit(stored, { indexed, unbound: checked.unbound });
      } catch (error) {
        if (!(error instanceof StaleAssumptions)) throw error;
      }
    }
    throw httpError(
      ERRORS.edit_conflict,
      `The account's indexes or schemas changed ${COMMIT_ATTEMPTS} times while this write was being committed; nothing was written; retry`,
    );
  });
  return { committed, warnings: checked.warnings };
}

export interface CreateInput extends MetadataInput {
  name: string;
  content?: unknown;
  contentText?: string;
}

const encoder = new TextEncoder();

/** The bytes to store: the `content` member exactly as written in the request, or `contentText`'s text. */
function contentBytesOf(input: CreateInput, rawBody: Uint8Array | undefined): Uint8Array {
  if (input.content instanceof CheckedJson) return input.content.bytes;
  const hasContent = "content" in input && input.content !== undefined;
  const hasText = input.contentText !== undefined;
  if (hasContent && hasText) throw validationError([{ path: "/contentText", message: "give either content or contentText, not both" }]);
  if (!hasContent && !hasText) throw validationError([{ path: "/content", message: "required (or contentText)" }]);
  if (hasText) {
    const text = input.contentText!;
    if (!text.isWellFormed()) throw validationError([{ path: "/contentText", message: "must be valid Unicode (no lone surrogates)" }]);
    const bytes = encoder.encode(text);
    const parsed = parseJsonBytes(bytes);
    if (!parsed.ok) throw validationError([{ path: "/contentText", message: `must be JSON text: ${parsed.message}` }]);
    return bytes;
  }
  const span = rawBody && memberValueSpan(rawBody, "content");
  // The parser always keeps the raw body; re-serialising is only a fallback and loses nothing JSON.parse kept.
  return span ?? encoder.encode(JSON.stringify(input.content));
}

export async function createDocument(
  deps: DocumentsDeps,
  accountId: string,
  input: CreateInput,
  rawBody: Uint8Array | undefined,
): Promise<guard.WrittenDocument> {
  const errors: FieldError[] = [];
  const metadata = normalizeMetadata({ name: input.name, description: input.description, tags: input.tags, folder: input.folder }, errors);
  const bytes = contentBytesOf(input, rawBody);
  if (bytes.byteLength > CHECK_BEFORE_WRITING_ABOVE) await precheckQuota(deps.repository, accountId, bytes.byteLength);
  const folder = metadata.folder ?? null;
  const { committed: row, warnings } = await storeAndCommit(
    deps,
    accountId,
    () => folder,
    bytes,
    async (stored, assumed) => {
      const now = deps.now();
      const created = unlessStale(
        await deps.repository.create(
          {
            id: newId("doc"),
            accountId,
            name: metadata.name!,
            description: metadata.description ?? null,
            tags: metadata.tags ?? [],
            folder,
            fileSize: stored.size,
            contentHash: stored.hash,
            contentKey: stored.key,
            createdAt: now,
            updatedAt: now,
          },
          assumed.indexed,
          undefined,
          assumed.unbound,
        ),
      );
      if (created.outcome !== "stored") throw quotaError(created.outcome, stored.size);
      return created.document;
    },
  );
  return guard.withWarnings(deps.schemaGuard, accountId, row, warnings);
}

export async function getDocument(deps: DocumentsDeps, accountId: string, id: string): Promise<DocumentRow> {
  const row = await deps.repository.findActive(accountId, id);
  if (!row) throw documentNotFound(id);
  return row;
}

/**
 * The row and its content. Should a content update have replaced the file between reading the row and
 * finding the file, the row is read again.
 */
export async function openContent(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
): Promise<{ row: DocumentRow; content: OpenedContent }> {
  let key = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await getDocument(deps, accountId, id);
    key = row.contentKey;
    const content = await deps.store.open(key);
    if (content) return { row, content };
  }
  // Removed behind Kiln's back (or lost by the store): nothing to serve and nothing a retry would fix.
  throw httpError(ERRORS.content_missing, `The content of document '${id}' (key ${key}) is missing from the content store`);
}

export interface Preconditions {
  ifMatch: string | null;
}

/** Locks the active row, checks If-Match against the given ETag, then runs the change. */
export async function underLock<T>(
  tx: Tx,
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  preconditions: Preconditions,
  etagOf: (row: DocumentRow) => string,
  change: (row: DocumentRow) => Promise<T>,
): Promise<T> {
  const row = await deps.repository.lockActive(tx, accountId, id);
  if (!row) throw documentNotFound(id);
  const current = etagOf(row);
  if (!ifMatchAllows(preconditions.ifMatch, current)) throw preconditionFailed(current);
  return change(row);
}

export const rowMetadataETag = (row: DocumentRow) => metadataETag(row.revision);
const rowContentETag = (row: DocumentRow) => contentETag(row.contentHash);

/** The raw body of a content update: not empty, and JSON. */
export function contentBodyOf(bytes: Uint8Array | CheckedJson): Uint8Array {
  if (bytes instanceof CheckedJson) return bytes.bytes;
  if (bytes.byteLength === 0) throw httpError(ERRORS.body_required, "The request body must be the new JSON content; it is empty");
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw httpError(ERRORS.malformed_json, parsed.message);
  return bytes;
}

/** The folder of document `id` for a write: `known` (undefined: not read yet) unless `fresh`, else read now. */
const folderOfDocument =
  (deps: DocumentsDeps, accountId: string, id: string, known: string | null | undefined) =>
  async (fresh: boolean): Promise<string | null> =>
    known !== undefined && !fresh ? known : (await getDocument(deps, accountId, id)).folder;

/**
 * Makes `stored` the document's new current version in one statement that commits on its own
 * (repository.newVersion: the row lock, If-Match against the content as it is then, the storage
 * reservation, the versions pushed past maxVersions dropped, the query index entries of `bytes`, the
 * write's assumptions made sure of). Returns the row and the content keys no longer referenced.
 */
async function adoptVersion(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  stored: StoredContent,
  acceptedHashes: string[] | null,
  assumed: WriteAssumptions,
): Promise<{ row: DocumentRow; released: string[] }> {
  const result = unlessStale(
    await deps.repository.newVersion({
      accountId,
      documentId: id,
      acceptedHashes,
      size: stored.size,
      hash: stored.hash,
      key: stored.key,
      now: deps.now(),
      indexed: assumed.indexed,
      unbound: assumed.unbound,
    }),
  );
  switch (result.outcome) {
    case "stored":
      return { row: result.document, released: result.released };
    case "not_found":
      throw documentNotFound(id);
    case "precondition_failed":
      throw preconditionFailed(contentETag(result.contentHash));
    default:
      throw quotaError(result.outcome, stored.size);
  }
}

/**
 * Stores `bytes` (valid JSON) as the document's new version: THE way content changes, for a content
 * replace, a restored version, a saved utility output. The bytes are written before the statement that
 * adopts them, so no lock is held while they reach the disk.
 */
export async function storeNewVersion(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  bytes: Uint8Array,
  preconditions: Preconditions,
): Promise<guard.WrittenDocument> {
  let before: DocumentRow | undefined;
  if (bytes.byteLength > CHECK_BEFORE_WRITING_ABOVE) {
    before = await getDocument(deps, accountId, id);
    if (!ifMatchAllows(preconditions.ifMatch, rowContentETag(before))) throw preconditionFailed(rowContentETag(before));
    await precheckQuota(deps.repository, accountId, bytes.byteLength, before);
  }
  const folder = folderOfDocument(deps, accountId, id, before?.folder);
  const {
    committed: { row, released },
    warnings,
  } = await storeAndCommit(deps, accountId, folder, bytes, (stored, assumed) =>
    adoptVersion(deps, accountId, id, stored, ifMatchContentHashes(preconditions.ifMatch), assumed),
  );
  for (const key of released) deps.retirer.retire(key);
  return guard.withWarnings(deps.schemaGuard, accountId, row, warnings);
}

/**
 * How many times a derived version is built again when another writer (another node, or a content
 * replace) changed the content between the read and the write, before the request answers 409.
 */
export const DERIVE_ATTEMPTS = 5;

const editConflict = (id: string) =>
  httpError(
    ERRORS.edit_conflict,
    `Document '${id}' changed ${DERIVE_ATTEMPTS} times while this change was being applied to it; nothing was written; retry`,
  );

/**
 * Derives the new version from the current content (a patch). No lock or transaction is held while
 * `derive` runs (it may wait for a worker): the content is read, the new version built and stored, and
 * then adopted only if the content is still the one it was built from (its hash, checked under the row
 * lock of the adopting statement); otherwise it is built again from the newer content. Derivations of one
 * document take turns in this process, so concurrent patches all apply, each to its predecessor's
 * result, without rebuilding. `derive` gets the account's maximum document size (null: none) to build
 * within; the quotas are checked on its result before anything is written.
 */
export async function deriveNewVersion(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  preconditions: Preconditions,
  derive: (current: Uint8Array, maxDocumentBytes: number | null) => Uint8Array | Promise<Uint8Array>,
): Promise<guard.WrittenDocument> {
  let warnings: guard.SchemaWarnings | undefined;
  const { row, released } = await deps.deriveTurns.run(id, async () => {
    for (let attempt = 0; attempt < DERIVE_ATTEMPTS; attempt++) {
      const { row: current, content } = await openContent(deps, accountId, id);
      const etag = rowContentETag(current);
      if (!ifMatchAllows(preconditions.ifMatch, etag)) throw preconditionFailed(etag);
      const limits = await deps.repository.limits(accountId, { documentId: id, version: current.contentVersion + 1 });
      const bytes = await derive(new Uint8Array(await content.body.arrayBuffer()), limits?.maxDocumentBytes ?? null);
      checkQuota(limits, bytes.byteLength);
      const folder = folderOfDocument(deps, accountId, id, current.folder);
      try {
        const adopted = await storeAndCommit(deps, accountId, folder, bytes, (stored, assumed) =>
          adoptVersion(deps, accountId, id, stored, [current.contentHash], assumed),
        );
        warnings = adopted.warnings;
        return adopted.committed;
      } catch (error) {
        // the content changed since it was read: build again from the new one (If-Match is checked on it above)
        if (!(error instanceof HttpError && error.code === "precondition_failed")) throw error;
      }
    }
    throw editConflict(id);
  });
  for (const key of released) deps.retirer.retire(key);
  return guard.withWarnings(deps.schemaGuard, accountId, row, warnings);
}

export async function replaceContent(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  body: Uint8Array | CheckedJson,
  preconditions: Preconditions,
): Promise<guard.WrittenDocument> {
  let bytes: Uint8Array;
  try {
    bytes = contentBodyOf(body);
  } catch (error) {
    await getDocument(deps, accountId, id); // a missing document's 404 comes before its body's 400
    throw error;
  }
  return storeNewVersion(deps, accountId, id, bytes, preconditions);
}
