/**
 * Where a document is: its metadata (a move between folders among it), the trash, a restore, a purge.
 * A move and a restore change which query indexes hold the document, so they compute its entries from
 * the content before their transaction and write them in it (documents/indexing.ts); a delete's entries
 * leave with it (the trigger documents_index_entries), a purge has none left.
 */

import { validationError } from "../../core/errors";
import { type MetadataInput, normalizeMetadata } from "../../core/metadata";
import type { DocumentRow } from "../../db/schema";
import { type IndexedContent, indexConflict, NO_ENTRIES } from "./indexing";
import type { Tx } from "./repository";
import * as guard from "./schema-guard";
import {
  type DocumentsDeps,
  documentNotDeleted,
  documentNotFound,
  openContent,
  type Preconditions,
  rowMetadataETag,
  underLock,
} from "./service";

/** The parsed body of a metadata update: at least one field, read after the document was found. */
export function metadataUpdateOf(body: unknown): MetadataInput {
  if (body !== null && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0) {
    throw validationError([{ path: "", message: "give at least one of name, description, tags, folder" }]);
  }
  return body as MetadataInput;
}

/** Thrown inside a transaction to roll it back and compute the entries again. */
class IndexAgain extends Error {}

const ATTEMPTS = 5;

/** The document's entries for `folder`, from the content `bytes` hashed `hash`. */
async function entriesOf(deps: DocumentsDeps, accountId: string, folder: string | null, bytes: () => Promise<Uint8Array>, fresh: boolean) {
  return (await deps.indexer.hasIndexes(accountId, fresh))
    ? deps.indexer.entries(accountId, folder, await bytes(), fresh)
    : NO_ENTRIES(null);
}

/**
 * Writes the entries in `tx`, or rolls it back to try again (or answers the unique conflict). `hash`:
 * the content they were computed from (undefined: none were, the account having no index).
 */
async function writeEntries(
  deps: DocumentsDeps,
  tx: Tx,
  accountId: string,
  row: DocumentRow,
  hash: string | undefined,
  indexed: IndexedContent,
) {
  if (hash !== undefined && row.contentHash !== hash) throw new IndexAgain();
  const outcome = await deps.repository.indexDocument(tx, accountId, row.id, row.contentHash, indexed);
  if (outcome === "indexed") return;
  if (typeof outcome !== "string" && outcome.outcome === "index_conflict") throw indexConflict(outcome.index, outcome.document);
  throw new IndexAgain();
}

async function retrying<T>(attempt: (fresh: boolean) => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt(i > 0);
    } catch (error) {
      if (!(error instanceof IndexAgain) || i + 1 >= ATTEMPTS) throw error;
    }
  }
}

export async function updateMetadata(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  input: MetadataInput,
  preconditions: Preconditions,
): Promise<guard.WrittenDocument> {
  const metadata = normalizeMetadata(metadataUpdateOf(input));
  const moves = metadata.folder !== undefined;
  const warnings = await guard.movedAgainstSchema(deps.schemaGuard, accountId, metadata.folder, () => openContent(deps, accountId, id));
  const row = await retrying(async (fresh) => {
    let indexed: { hash?: string; entries: IndexedContent } | undefined;
    if (moves && (await deps.indexer.hasIndexes(accountId, fresh))) {
      const { row, content } = await openContent(deps, accountId, id);
      const bytes = new Uint8Array(await content.body.arrayBuffer());
      indexed = { hash: row.contentHash, entries: await deps.indexer.entries(accountId, metadata.folder ?? null, bytes, fresh) };
    } else if (moves) indexed = { entries: NO_ENTRIES(null) };
    return deps.repository.transaction((tx) =>
      underLock(tx, deps, accountId, id, preconditions, rowMetadataETag, async (row) => {
        const now = deps.now();
        await deps.repository.ensureFolder(tx, accountId, metadata.folder, now);
        const updated = await deps.repository.update(tx, id, { ...metadata, updatedAt: now });
        if (indexed) await writeEntries(deps, tx, accountId, row, indexed.hash, indexed.entries);
        return updated;
      }),
    );
  });
  return guard.withWarnings(deps.schemaGuard, accountId, row, warnings);
}

export async function softDelete(deps: DocumentsDeps, accountId: string, id: string, preconditions: Preconditions): Promise<DocumentRow> {
  return deps.repository.transaction((tx) =>
    underLock(tx, deps, accountId, id, preconditions, rowMetadataETag, () => {
      const now = deps.now();
      return deps.repository.update(tx, id, { deletedAt: now, purgeAt: now + deps.purgeAfterMs });
    }),
  );
}

export async function purgeDocument(deps: DocumentsDeps, accountId: string, id: string): Promise<void> {
  const contentKeys = await deps.repository.purge(accountId, id);
  if (!contentKeys) {
    if ((await deps.repository.exists(accountId, id))?.deleted === false) throw documentNotDeleted(id);
    throw documentNotFound(id);
  }
  for (const key of contentKeys) await deps.store.remove(key).catch(() => {});
}

/** Out of the trash, with its index entries back, computed from its content as it was deleted. */
export async function restoreDocument(deps: DocumentsDeps, accountId: string, id: string): Promise<DocumentRow> {
  return retrying(async (fresh) => {
    const before = await deps.repository.find(accountId, id);
    if (!before) throw documentNotFound(id);
    if (before.deletedAt === null) throw documentNotDeleted(id);
    const bytes = async () => {
      const content = await deps.store.open(before.contentKey);
      if (!content) throw new IndexAgain();
      return new Uint8Array(await content.body.arrayBuffer());
    };
    const entries = await entriesOf(deps, accountId, before.folder, bytes, fresh);
    return deps.repository.transaction(async (tx) => {
      const row = await deps.repository.restore(tx, accountId, id);
      if (!row) throw new IndexAgain();
      await writeEntries(deps, tx, accountId, row, before.contentHash, entries);
      return row;
    });
  });
}
