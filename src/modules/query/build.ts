/**
 * Index builds: the documents a folder held when an index was declared are indexed by an internal job of
 * kind "indexBuild" (the jobs engine, modules/jobs), made in the index's own transaction over the
 * folder's active documents and its subfolders', while new writes index themselves as they commit. Per
 * document, `prepare` reads the stored bytes and computes the entries (in the worker pool past
 * UTILITY_INLINE_MAX_BYTES, as a utility run would), and `commit` writes them with kiln_index_document,
 * the statement every write uses, in the transaction that marks the item done. That statement writes
 * nothing when the document's content is no longer the one read (its writer, which committed after the
 * index existed, indexed it: the item is skipped with document_changed), so a build never replaces
 * newer entries with stale ones; an index declared or dropped meanwhile, or a move, makes the engine
 * prepare the document again (PrepareAgain). The index's progress is its job's; the job ends it `ready`
 * (index.ready) or `failed` with its reason (index.failed): a unique index meeting a duplicate key, a
 * value past the account's limits (onError stop: the first such document ends the build). Dropping the
 * index cancels its job.
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import { type DocumentEntries, documentEntries } from "../../core/json/index-entries";
import type { Executor } from "../../db/statement";
import type { WorkerPool } from "../../engine/pool";
import type { Logger } from "../../observability/logger";
import type { IndexedContent } from "../documents/indexing";
import { type DocumentsDeps, openContent } from "../documents/service";
import { type ItemOutcome, type JobItem, type JobKind, PrepareAgain } from "../jobs/kinds";
import { cancelJob, discardJob, type JobRecord } from "../jobs/repository";
import { createJob, type JobsDeps } from "../jobs/service";
import { inWorker } from "../utilities/in-worker";
import { coveringIndexes, entryLimits, type IndexSets, indexEvent, indexedContent } from "./indexes";
import type { IndexRow, QueryRepository } from "./repository";

export const INDEX_BUILD = "indexBuild";

/** What an index build's job stores. */
export interface IndexBuildParams {
  indexId: string;
}

export interface BuildKindDeps {
  queries: QueryRepository;
  sets: IndexSets;
  documents: DocumentsDeps;
  pool?: WorkerPool;
  /** UTILITY_INLINE_MAX_BYTES: a larger document's entries are computed in the worker pool */
  inlineMaxBytes: number;
  logger: Logger;
  now: () => number;
}

type Prepared = { gone: { code: string; message: string } } | { hash: string; indexed: IndexedContent };

const decoder = new TextDecoder();

/** The index set a build's document is computed with: the node's copy, read afresh when it lacks the index or a commit was refused. */
async function indexSetFor(deps: BuildKindDeps, item: JobItem, indexId: string) {
  const accountId = item.job.accountId;
  const kept = await deps.sets.of(accountId, (item.attempt ?? 0) > 0);
  return kept.indexes.some((index) => index.id === indexId && index.state === "building") ? kept : deps.sets.of(accountId, true);
}

async function computed(deps: BuildKindDeps, item: JobItem, bytes: Uint8Array, work: Parameters<WorkerPool["runIndexEntries"]>[1]) {
  const pool = deps.pool;
  if (!pool || work.indexes.length === 0 || bytes.byteLength <= deps.inlineMaxBytes)
    return documentEntries(bytes, work.indexes, work.limits);
  const result = await inWorker(deps, INDEX_BUILD, () => pool.runIndexEntries(item.job.accountId, work, item.signal));
  const text = "outputJson" in result ? result.outputJson : decoder.decode(result.outputChunks[0]);
  return JSON.parse(text) as DocumentEntries;
}

export function indexBuildKind(deps: BuildKindDeps): JobKind<Prepared> {
  const gone = (code: keyof typeof ERRORS, message: string): Prepared => ({ gone: { code: ERRORS[code].code, message } });
  return {
    kind: INDEX_BUILD,
    creditsPerItem: () => 0,

    async prepare(item) {
      const { indexId } = item.job.params as IndexBuildParams;
      const { indexes, limits } = await indexSetFor(deps, item, indexId);
      if (!indexes.some((index) => index.id === indexId && index.state === "building"))
        return gone("index_not_found", `Index '${indexId}' is no longer being built`);
      let opened: Awaited<ReturnType<typeof openContent>>;
      try {
        opened = await openContent(deps.documents, item.job.accountId, item.documentId);
      } catch (error) {
        if ((error as { code?: string }).code !== ERRORS.document_not_found.code) throw error;
        return gone("document_not_found", `Document '${item.documentId}' was deleted before the build read it`);
      }
      const { row, content } = opened;
      const bytes = new Uint8Array(await content.body.arrayBuffer());
      const work = { document: bytes, indexes: coveringIndexes(indexes, row.folder, indexId), limits: entryLimits(limits) };
      return { hash: row.contentHash, indexed: indexedContent(indexes, row.folder, await computed(deps, item, bytes, work)) };
    },

    // kiln_index_document locks the account row, and its entries' foreign keys the document: documents first, in id order
    async lockChunk(tx, items) {
      await deps.documents.repository.lockDocuments(
        tx,
        items.map((item) => item.documentId),
        "keyShare",
      );
    },

    async commit(tx, item, prepared): Promise<ItemOutcome> {
      if ("gone" in prepared) return { status: "skipped", error: prepared.gone };
      const { indexId } = item.job.params as IndexBuildParams;
      const written = await deps.documents.repository.indexDocument(
        tx,
        item.job.accountId,
        item.documentId,
        prepared.hash,
        prepared.indexed,
        indexId,
      );
      if (written === "indexed") return { status: "succeeded" };
      if (written === "stale") {
        const message = `Document '${item.documentId}' changed after the build read it; the write that changed it indexed it`;
        return { status: "skipped", error: { code: ERRORS.document_changed.code, message } };
      }
      if (written.outcome === "index_set_changed")
        throw new PrepareAgain("The account's query indexes or the document's folder kept changing while the build indexed it");
      throw httpError(
        ERRORS.index_unique_conflict,
        `Documents '${item.documentId}' and '${written.document}' have the same key in unique index '${written.index}'`,
      );
    },

    async onFinished(tx, job: JobRecord) {
      const index = { accountId: job.accountId, id: (job.params as IndexBuildParams).indexId };
      const reason = job.state === "cancelled" ? "Its build job was cancelled" : (job.error?.message ?? "Its build job failed");
      const state = job.state === "succeeded" ? "ready" : "failed";
      await deps.queries.finish(tx, index, state, state === "ready" ? null : reason, deps.now(), indexEvent);
    },
  };
}

/** The jobs side of an index's life: its build made with it (or dropped again: the folder held nothing), cancelled when it is dropped. */
export const indexBuildJobs = (jobs: Pick<JobsDeps, "database" | "now">) => ({
  start: async (on: Executor, index: Pick<IndexRow, "id" | "accountId">, documentIds: string[]) => {
    const params: IndexBuildParams = { indexId: index.id };
    return (await createJob(jobs, { accountId: index.accountId, kind: INDEX_BUILD, documentIds, params, onError: "stop" }, on)).id;
  },
  discard: discardJob,
  cancel: async (accountId: string, jobId: string) => {
    await cancelJob(jobs.database, accountId, jobId, jobs.now());
  },
});
