/**
 * The documents' side of the query indexes (documents/indexing.ts): a document's entries replaced by
 * kiln_index_document in a move's or a restore's transaction or by an index build's item, the
 * documents a build goes over, and a job chunk's document locks. Part of documentsRepository; the refusals its writes share are here.
 */
import { causeWithCode } from "../../core/errors";
import type { Db } from "../../db/client";
import { documents } from "../../db/schema";
import { connectionOf, run, type Executor as StatementExecutor } from "../../db/statement";
import { INDEX_CONFLICT, INDEX_SET_CHANGED, type IndexedContent, type IndexOutcome } from "./indexing";
import { SCHEMAS_CHANGED } from "./schema-guard";
import { FOLDER_IDS, INDEX_DOCUMENT, type IndexParams, LOCK_DOCUMENTS, STORAGE_REFUSED, type TextArray } from "./statements";

export type QuotaRefusal = "document_too_large" | "storage_limit_exceeded";
/** A Drizzle transaction: what documentsRepository.transaction hands its callback. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** A text[] parameter (Drizzle would spread a plain array into a list of parameters). */
export const textArray = (values: string[]) => documents.tags.mapToDriverValue(values) as TextArray;

/** A write refused because the account binds a folder its writer took for unbound (documents/schema-guard.ts). */
export type SchemasChanged = { outcome: "schemas_changed" };

const REFUSALS = new Set([STORAGE_REFUSED, INDEX_SET_CHANGED, INDEX_CONFLICT, SCHEMAS_CHANGED]);

/**
 * The refusal a failed write raised: its reservation's (STORAGE_REFUSED), its index entries'
 * (documents/indexing.ts) or its schema check's (SCHEMAS_CHANGED); any other error is thrown on.
 */
export function writeRefusal(error: unknown): { outcome: QuotaRefusal } | IndexOutcome | SchemasChanged {
  const refused = causeWithCode(error, (code) => REFUSALS.has(code));
  if (!refused) throw error;
  if (refused.code === INDEX_SET_CHANGED) return { outcome: "index_set_changed" };
  if (refused.code === SCHEMAS_CHANGED) return { outcome: "schemas_changed" };
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
  /** The active documents of a folder and its subfolders, on `on` (a transaction's connection). */
  async folderIds(on: StatementExecutor, accountId: string, folder: string): Promise<string[]> {
    return (await run(on, FOLDER_IDS, [accountId, folder])).map((row) => row.id);
  },

  /** A job chunk's documents locked in id order, in its commit transaction (LOCK_DOCUMENTS). */
  async lockDocuments(on: StatementExecutor, ids: string[], strength: keyof typeof LOCK_DOCUMENTS): Promise<void> {
    if (ids.length > 0) await run(on, LOCK_DOCUMENTS[strength], [textArray(ids)]);
  },

  /**
   * Replaces a document's index entries (kiln_index_document): in a move's or a restore's transaction,
   * or in an index build's item (`only`: that index). "stale": the document is gone or its content is no longer `hash`.
   */
  async indexDocument(
    tx: Tx | StatementExecutor | undefined,
    accountId: string,
    id: string,
    hash: string,
    indexed: IndexedContent,
    only: string | null = null,
  ): Promise<"indexed" | "stale" | IndexOutcome> {
    try {
      const params = [accountId, id, hash, indexed.folder, ...indexParams(indexed), only] as const;
      const on = tx === undefined ? db : "unsafe" in tx ? tx : connectionOf(tx);
      const [row] = await run(on, INDEX_DOCUMENT, [...params]);
      return row.indexed ? "indexed" : "stale";
    } catch (error) {
      return writeRefusal(error) as IndexOutcome;
    }
  },
});
