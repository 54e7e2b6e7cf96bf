/**
 * The documents' side of the query indexes (documents/indexing.ts): a document's entries replaced by
 * kiln_index_document in a move's or a restore's transaction or by an index build, and the walk of a
 * folder's documents a build makes. Part of documentsRepository; the refusals its writes share are here.
 */
import { causeWithCode } from "../../core/errors";
import type { Db } from "../../db/client";
import { documents } from "../../db/schema";
import { connectionOf, run, type Executor as StatementExecutor } from "../../db/statement";
import { INDEX_CONFLICT, INDEX_SET_CHANGED, type IndexedContent, type IndexOutcome } from "./indexing";
import {
  type BuildDocument,
  FOLDER_DOCUMENTS,
  FOLDER_TOTAL,
  INDEX_DOCUMENT,
  type IndexParams,
  LOCK_FOR_INDEXING,
  NEXT_FOLDER,
  STORAGE_REFUSED,
  type TextArray,
} from "./statements";

export type QuotaRefusal = "document_too_large" | "storage_limit_exceeded";
/** A Drizzle transaction: what documentsRepository.transaction hands its callback. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** A text[] parameter (Drizzle would spread a plain array into a list of parameters). */
export const textArray = (values: string[]) => documents.tags.mapToDriverValue(values) as TextArray;

/**
 * The refusal a failed write raised: its reservation's (STORAGE_REFUSED), or its index entries'
 * (documents/indexing.ts); any other error is thrown on.
 */
export function writeRefusal(error: unknown): { outcome: QuotaRefusal } | IndexOutcome {
  const refused = causeWithCode(error, (code) => code === STORAGE_REFUSED || code === INDEX_SET_CHANGED || code === INDEX_CONFLICT);
  if (!refused) throw error;
  if (refused.code === INDEX_SET_CHANGED) return { outcome: "index_set_changed" };
  if (refused.code === INDEX_CONFLICT) {
    const [index, document] = refused.message.split(" ");
    return { outcome: "index_conflict", index, document };
  }
  return { outcome: refused.message as QuotaRefusal };
}

export const indexParams = (indexed: IndexedContent): IndexParams => [
  textArray(indexed.indexIds),
  textArray(indexed.entryIndexes),
  textArray(indexed.entryKeys),
];

export const indexingRepository = (db: Db) => ({
  /** Active documents in a folder and its subfolders (the folders' kept counts), on `on` (a transaction's connection). */
  async folderTotal(on: StatementExecutor, accountId: string, folder: string): Promise<number> {
    return (await run(on, FOLDER_TOTAL, [accountId, folder]))[0].total;
  },

  /** The next folder of the subtree of `folder` after `after` (byte order), for a walk over its documents. */
  nextFolder: async (accountId: string, folder: string, after: string | null): Promise<string | undefined> =>
    (await run(db, NEXT_FOLDER, [accountId, folder, after]))[0]?.path,

  /** A batch of one folder's active documents, in (createdAt, id) order after `after`. */
  folderDocuments: (accountId: string, folder: string, after: { createdAt: number; id: string }, limit: number): Promise<BuildDocument[]> =>
    run(db, FOLDER_DOCUMENTS, [accountId, folder, after.createdAt, after.id, limit]),

  /**
   * Replaces a document's index entries (kiln_index_document): in a move's or a restore's transaction,
   * or on its own for one index (`only`: a build). "stale": the document is gone or its content is no longer `hash`.
   */
  async indexDocument(
    tx: Tx | undefined,
    accountId: string,
    id: string,
    hash: string,
    indexed: IndexedContent,
    only: string | null = null,
  ): Promise<"indexed" | "stale" | IndexOutcome> {
    try {
      const params = [accountId, id, hash, indexed.folder, ...indexParams(indexed), only] as const;
      const [row] = await run(tx ? connectionOf(tx) : db, INDEX_DOCUMENT, [...params]);
      return row.indexed ? "indexed" : "stale";
    } catch (error) {
      return writeRefusal(error) as IndexOutcome;
    }
  },

  /**
   * One index's entries of many documents in one transaction (an index build's batch), the statements
   * pipelined on its connection: one commit for the batch. A refusal undoes the batch.
   */
  async indexDocuments(
    accountId: string,
    items: { id: string; hash: string; indexed: IndexedContent }[],
    only: string,
  ): Promise<"indexed" | IndexOutcome> {
    try {
      await db.$client.begin(async (tx) => {
        await run(tx, LOCK_FOR_INDEXING, [textArray(items.map((item) => item.id))]);
        await Promise.all(
          items.map((item) =>
            run(tx, INDEX_DOCUMENT, [accountId, item.id, item.hash, item.indexed.folder, ...indexParams(item.indexed), only]),
          ),
        );
      });
      return "indexed";
    } catch (error) {
      return writeRefusal(error) as IndexOutcome;
    }
  },
});
