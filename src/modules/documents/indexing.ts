/**
 * Where the documents module meets the query indexes (src/modules/query, which owns them): every write
 * that changes a document's content or place computes its index entries from the bytes before its
 * transaction, through the `Indexer` the query module passes in, and hands them to the statement that
 * commits the change (kiln_create, kiln_new_version, kiln_index_document). The database checks, under
 * the account's row lock, that they were computed for the account's current index set and the
 * document's folder; when an index was created or dropped meanwhile the write computes them again.
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";

/** A document's entries for the account's indexes: pairwise index ids and hex keys. */
export interface IndexedContent {
  /** the account's indexes (not failed), sorted: the set the entries were computed for */
  indexIds: string[];
  /** the folder they were computed for */
  folder: string | null;
  entryIndexes: string[];
  entryKeys: string[];
}

export interface Indexer {
  /** whether the account has an index; `fresh` reads the database, not the node's copy */
  hasIndexes(accountId: string, fresh: boolean): Promise<boolean>;
  /** the entries of `bytes` in a document of `folder`; throws 400 index_value_refused past a limit */
  entries(accountId: string, folder: string | null, bytes: Uint8Array, fresh: boolean): Promise<IndexedContent>;
}

/** For a repository used without the query module (a test of the documents alone): no account has an index. */
export const NO_INDEXES: Indexer = {
  hasIndexes: async () => false,
  entries: async (_accountId, folder) => ({ indexIds: [], folder, entryIndexes: [], entryKeys: [] }),
};

export const NO_ENTRIES = (folder: string | null): IndexedContent => ({ indexIds: [], folder, entryIndexes: [], entryKeys: [] });

/** The refusals of kiln_index_document (src/db/sql/functions), by SQLSTATE. */
export const INDEX_SET_CHANGED = "KL010";
export const INDEX_CONFLICT = "KL011";

export type IndexOutcome = { outcome: "index_set_changed" } | { outcome: "index_conflict"; index: string; document: string };

export const indexConflict = (index: string, document: string) =>
  httpError(ERRORS.index_unique_conflict, `Index '${index}' is unique and document '${document}' already has this key`, {
    members: { index, document },
  });

/** The entries of `bytes` in a document of the folder `folder()` names, both asked only when the account has an index. */
export async function entriesIfIndexed(
  indexer: Indexer,
  accountId: string,
  folder: () => string | null | Promise<string | null>,
  bytes: Uint8Array,
  fresh: boolean,
): Promise<IndexedContent> {
  return (await indexer.hasIndexes(accountId, fresh)) ? indexer.entries(accountId, await folder(), bytes, fresh) : NO_ENTRIES(null);
}
