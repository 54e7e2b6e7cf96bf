/**
 * The query indexes' rows: the indexes and their entries; a build is a job (build.ts), its progress the job's. An index is created or dropped
 * under the account row lock, the lock every write of the account takes before it writes entries
 * (kiln_index_document), so a write either sees the new index or commits before its build lists it.
 */
import type { Db } from "../../db/client";
import { documents } from "../../db/schema";
import { type Executor, run } from "../../db/statement";
import {
  ACCOUNT_INDEXES,
  BUILD_JOB,
  CATCH_UP_ITEMS,
  DELETE_INDEX,
  DROP_ENTRIES,
  ENTRIES_OF,
  type EntryRow,
  FINISH_BUILD,
  INDEX_COUNT,
  INSERT_INDEX,
  type IndexRow,
  LOCK_ACCOUNT,
  ONE_INDEX,
  QUERY_LIMITS,
  RECORD_INDEX_EVENT,
  SCAN,
} from "./statements";

export type { EntryRow, IndexRow };

export type NewIndex = Pick<IndexRow, "id" | "accountId" | "folder" | "name" | "fields" | "unique"> & { now: number };

export interface ScanRange {
  accountId: string;
  indexId: string;
  lower: Uint8Array;
  upper: Uint8Array;
  backward: boolean;
  after?: { key: Uint8Array; documentId: string };
  limit: number;
}

const bytes = (value: Uint8Array) => Buffer.from(value.buffer, value.byteOffset, value.byteLength);

/** The event an index's end records, with the index as the API shows it. */
export type IndexEvent = (row: IndexRow) => { type: string; data: unknown };

/** The active documents the index's folder holds, read on the creating transaction's connection. */
export type FolderIds = (on: Executor, accountId: string, folder: string) => Promise<string[]>;

/** A new index's build (build.ts): its job over these documents, made in the index's transaction (its id), or dropped there again. */
export interface IndexBuilds {
  start(on: Executor, index: Pick<IndexRow, "id" | "accountId">, documentIds: string[]): Promise<string>;
  discard(on: Executor, jobId: string): Promise<void>;
}

/** The account may declare no more indexes: the create's transaction rolls back. */
class IndexLimitReached extends Error {
  constructor(readonly max: number) {
    super(`at most ${max} indexes`);
  }
}

const atLimit = (account: { maxIndexes: number | null; count: number } | undefined) =>
  account !== undefined && account.maxIndexes !== null && account.count >= account.maxIndexes;

export const queryRepository = (db: Db, folderIds: FolderIds) => ({
  async indexes(accountId: string): Promise<IndexRow[]> {
    return run(db, ACCOUNT_INDEXES, [accountId]);
  },

  /** The account's indexes and its query limits (an unknown account: none, and no bounds). */
  async indexSet(accountId: string) {
    const [indexes, [limits]] = await Promise.all([run(db, ACCOUNT_INDEXES, [accountId]), run(db, QUERY_LIMITS, [accountId])]);
    return { indexes, limits: limits ?? { maxIndexedArrayElements: null, maxIndexedValueBytes: null, maxFilterBytes: null } };
  },

  async index(accountId: string, id: string): Promise<IndexRow | undefined> {
    return (await run(db, ONE_INDEX, [accountId, id]))[0];
  },

  /**
   * A new index. Its build's job and items, for the folder's documents as they are now, come first,
   * holding no lock a write or a job submission waits for (an internal job takes no submissions lock):
   * listing and inserting a large folder takes seconds (10^5 documents: about 1.7 s). Then, under the
   * account row lock: the limit (refused: nothing is kept), the documents committed meanwhile appended
   * (CATCH_UP_ITEMS), and the index: ready at once (with its event, its job dropped) when the folder
   * holds no document, else building. A document written after the commit indexes itself; one written
   * before is the build's.
   */
  async create(
    index: NewIndex,
    readyEvent: IndexEvent,
    builds: IndexBuilds,
  ): Promise<{ outcome: "created"; row: IndexRow } | { outcome: "limit"; max: number }> {
    const [known] = await run(db, INDEX_COUNT, [index.accountId]);
    if (atLimit(known)) return { outcome: "limit", max: known!.maxIndexes! };
    try {
      return await db.$client.begin(async (tx) => {
        const listed = await folderIds(tx, index.accountId, index.folder);
        const jobId = await builds.start(tx, index, listed);
        const [account] = await run(tx, LOCK_ACCOUNT, [index.accountId]);
        if (atLimit(account)) throw new IndexLimitReached(account.maxIndexes!);
        const [{ total }] = await run(tx, CATCH_UP_ITEMS, [jobId, index.accountId, index.folder, listed.length]);
        const state = total === 0 ? "ready" : "building";
        const [row] = await run(tx, INSERT_INDEX, [
          index.id,
          index.accountId,
          index.folder,
          index.name,
          JSON.stringify(index.fields),
          index.unique,
          state,
          total,
          index.now,
        ]);
        if (state === "ready") {
          await builds.discard(tx, jobId);
          const event = readyEvent(row);
          await run(tx, RECORD_INDEX_EVENT, [index.accountId, event.type, index.folder, JSON.stringify(event.data), index.now]);
        }
        return { outcome: "created" as const, row };
      });
    } catch (error) {
      if (error instanceof IndexLimitReached) return { outcome: "limit", max: error.max };
      throw error;
    }
  },

  /** Drops an index and its entries, releasing their storage, under the account row lock; its build job's id, if it has one. */
  async drop(accountId: string, id: string): Promise<{ dropped: boolean; buildJob?: string }> {
    return db.$client.begin(async (tx) => {
      await run(tx, LOCK_ACCOUNT, [accountId]);
      await run(tx, DROP_ENTRIES, [accountId, id]);
      const dropped = (await run(tx, DELETE_INDEX, [accountId, id])).length > 0;
      return { dropped, buildJob: (await run(tx, BUILD_JOB, [accountId, id]))[0]?.id };
    });
  },

  async scan(range: ScanRange): Promise<EntryRow[]> {
    const base = [range.accountId, range.indexId, bytes(range.lower), bytes(range.upper), range.limit] as const;
    if (!range.after) return run(db, range.backward ? SCAN.backward : SCAN.forward, [...base]);
    return run(db, range.backward ? SCAN.backwardAfter : SCAN.forwardAfter, [...base, bytes(range.after.key), range.after.documentId]);
  },

  async entriesOf(accountId: string, indexId: string, documentIds: string[]): Promise<EntryRow[]> {
    if (documentIds.length === 0) return [];
    return run(db, ENTRIES_OF, [accountId, indexId, documents.tags.mapToDriverValue(documentIds) as string]);
  },

  /** The build's end and its event, in the transaction `tx` that finishes its job; a failed index's entries go. */
  async finish(
    tx: Executor,
    index: { accountId: string; id: string },
    state: "ready" | "failed",
    reason: string | null,
    now: number,
    event: IndexEvent,
  ): Promise<void> {
    if (state === "failed") {
      await run(tx, LOCK_ACCOUNT, [index.accountId]);
      await run(tx, DROP_ENTRIES, [index.accountId, index.id]);
    }
    const [row] = await run(tx, FINISH_BUILD, [index.id, state, reason, now]);
    if (!row) return;
    const recorded = event(row);
    await run(tx, RECORD_INDEX_EVENT, [index.accountId, recorded.type, row.folder, JSON.stringify(recorded.data), now]);
  },
});

export type QueryRepository = ReturnType<typeof queryRepository>;
