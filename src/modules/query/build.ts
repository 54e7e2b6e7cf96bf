/**
 * Index builds: the documents a folder held when an index was declared are indexed in the background,
 * from their stored bytes, while new writes index themselves as they commit. A build walks the index's
 * folder and its subfolders one folder at a time (in byte order), each in its (createdAt, id) order, in
 * batches; each document's entries are written by kiln_index_document, the statement every write
 * uses, so a build and a write of the same document agree (the one that commits last wrote the current
 * content's entries; a build's read of content replaced since is skipped, "stale"). The build's
 * position is kept on the index row after every batch, so a build a node stopped resumes where it was.
 * It ends `ready` (index.ready), or `failed` with its reason (index.failed): a unique index meeting a
 * duplicate key, a value past the account's limits.
 *
 * Cluster-once: SKIP LOCKED claim. A node claims one building index by leasing it (CLAIM_BUILD, FOR
 * UPDATE SKIP LOCKED, lease_until), renews the lease with each batch's progress and stops when a
 * renewal fails (the lease passed to another node); a crashed node's lease expires and another resumes.
 *
 * Not a job of the jobs engine (modules/jobs): a job lists its documents as items when it is made (a
 * million rows for a million-document folder) and commits a chunk's items one after another in one
 * transaction, each taking the account row and then its document's key; a content replace takes its
 * document and then the account row, so the two can deadlock. A batch here walks the folder by keyset
 * and locks its documents first, in id order, then the account row (LOCK_FOR_INDEXING).
 */

import { type BackgroundWork, every } from "../../core/background";
import { HttpError } from "../../core/errors";
import type { Logger } from "../../observability/logger";
import type { ContentStore } from "../../storage/content-store";
import type { IndexedContent } from "../documents/indexing";
import type { BuildDocument, DocumentsRepository } from "../documents/repository";
import { entriesFor, type IndexSets, indexEvent } from "./indexes";
import type { IndexRow, QueryRepository } from "./repository";

export interface BuildDeps {
  queries: QueryRepository;
  documents: DocumentsRepository;
  store: ContentStore;
  sets: IndexSets;
  now: () => number;
  /** documents per batch */
  batch: number;
  leaseMs: number;
}

interface Position {
  folder: string | null;
  createdAt: number;
  id: string;
}

/** Documents per batch of a build, the lease a batch holds, and how often a node looks for waiting builds. */
export const INDEX_BUILD_BATCH = 200;
export const INDEX_BUILD_LEASE_MS = 60_000;
export const INDEX_BUILD_INTERVAL_MS = 1_000;
/** Contents of a batch read from the store at once. */
const READ_CONCURRENCY = 8;

const START: Position = { folder: null, createdAt: -1, id: "" };
const positionOf = (index: IndexRow): Position => (index.buildCursor ? (JSON.parse(index.buildCursor) as Position) : START);

type Step = "more" | "done" | "lost";

/** A batch's documents as stored, read before the batch's transaction (a document replaced meanwhile is left out: its writer indexed it). */
async function readBatch(deps: BuildDeps, docs: BuildDocument[]) {
  const read: { doc: BuildDocument; bytes: Uint8Array }[] = [];
  for (let at = 0; at < docs.length; at += READ_CONCURRENCY)
    await Promise.all(
      docs.slice(at, at + READ_CONCURRENCY).map(async (doc) => {
        const content = await deps.store.open(doc.contentKey);
        if (content) read.push({ doc, bytes: new Uint8Array(await content.body.arrayBuffer()) });
      }),
    );
  return read;
}

/** Indexes a batch from its bytes in one transaction; a reason when the index must fail. */
async function indexBatch(deps: BuildDeps, index: IndexRow, folder: string, docs: BuildDocument[]): Promise<string | undefined> {
  const read = await readBatch(deps, docs);
  for (let attempt = 0; attempt < 5; attempt++) {
    const { indexes, limits } = await deps.sets.of(index.accountId, attempt > 0);
    if (!indexes.some((one) => one.id === index.id && one.state === "building")) return undefined;
    const items: { id: string; hash: string; indexed: IndexedContent }[] = [];
    for (const { doc, bytes } of read) {
      try {
        items.push({ id: doc.id, hash: doc.contentHash, indexed: entriesFor(indexes, limits, folder, bytes, index.id) });
      } catch (error) {
        if (error instanceof HttpError) return `document ${doc.id}: ${error.message}`;
        throw error;
      }
    }
    const outcome = await deps.documents.indexDocuments(index.accountId, items, index.id);
    if (outcome === "indexed") return undefined;
    if (outcome.outcome === "index_conflict")
      return `documents ${outcome.document} and another have the same key in unique index ${outcome.index}`;
  }
  return undefined;
}

/** One batch of one index's build: indexes up to `batch` documents and records where it stopped. */
export async function buildBatch(deps: BuildDeps, index: IndexRow): Promise<Step> {
  let position = positionOf(index);
  const folder = position.folder ?? (await deps.documents.nextFolder(index.accountId, index.folder, null));
  if (!folder) {
    await deps.queries.finish(index, "ready", null, deps.now(), indexEvent);
    return "done";
  }
  const docs = await deps.documents.folderDocuments(index.accountId, folder, position, deps.batch);
  const reason = await indexBatch(deps, index, folder, docs);
  if (reason) {
    await deps.queries.finish(index, "failed", reason, deps.now(), indexEvent);
    return "done";
  }
  const last = docs.at(-1);
  if (last) position = { folder, createdAt: last.createdAt, id: last.id };
  else {
    const next = await deps.documents.nextFolder(index.accountId, index.folder, folder);
    if (!next) {
      await deps.queries.finish(index, "ready", null, deps.now(), indexEvent);
      return "done";
    }
    position = { folder: next, createdAt: -1, id: "" };
  }
  const cursor = JSON.stringify(position);
  return (await deps.queries.progress(index.id, docs.length, cursor, deps.now())) ? "more" : "lost";
}

/**
 * Builds until no index is waiting: one batch per claim, then the lease is given back, so the building
 * indexes of every account take turns (the claim takes the one whose progress is oldest).
 */
export async function buildWaiting(deps: BuildDeps, stopping: () => boolean = () => false): Promise<void> {
  while (!stopping()) {
    const index = await deps.queries.claimBuild(deps.now(), deps.leaseMs);
    if (!index) return;
    await buildBatch(deps, index);
  }
}

export function indexBuilds(deps: BuildDeps & { logger: Logger; intervalMs: number }): BackgroundWork {
  return {
    name: "index builds",
    clusterOnce: ["SKIP LOCKED claim"],
    start() {
      let stopping = false;
      const running = every(
        deps.intervalMs,
        () =>
          buildWaiting(deps, () => stopping).catch((error) =>
            deps.logger.log("error", "index build failed", { error: (error as Error).message }),
          ),
        { immediately: true },
      );
      return {
        async stop() {
          stopping = true;
          await running.stop();
        },
      };
    },
  };
}
