/**
 * Job kinds: what a job does per document. The engine (runner.ts) claims items, keeps leases, checks for
 * a cancel, counts progress and credits and finishes jobs; a kind only says what one document's work is,
 * in the parts below, so that a new kind registers without touching the engine:
 *
 * - `prepare(item)`, outside any transaction and lock: read what the document's work needs (its stored
 *   bytes), do the work (in the worker pool, say), write any content it makes to the content store.
 *   It may wait for anything. Throwing an HttpError fails that document with the error's code and message
 *   (a `charged` error keeps its credits, as for a single run). `item.signal` aborts on a cancel.
 * - `commit(tx, item, prepared)`, in the short transaction that marks the item done, on that
 *   transaction's connection (`tx`): write the document's effect (a new version, a new document, index
 *   entries) and return its outcome. It must not wait for anything but its own statements. The engine
 *   commits a chunk's items in one transaction; should one commit throw, the chunk is committed again one
 *   item at a time, each commit under a savepoint, and a commit that throws an HttpError then fails its
 *   item alone. A lease lost meanwhile, or a cancel seen before the commit, makes the engine drop the
 *   prepared work uncommitted: each document's effect is written exactly once, by the transaction that
 *   marks its item done.
 *   A commit may throw PrepareAgain when what `prepare` computed no longer fits the database (the
 *   account's query indexes changed since): nothing of it is written, and the engine prepares the item
 *   again (`item.attempt` counts the tries) and commits it in a later transaction, a few times at most.
 * - `lockChunk(tx, items)`, optional, first in the chunk's commit transaction, before any item's commit:
 *   the rows the commits will lock, locked in one order. The lock order of a chunk's commit is: its job
 *   items (the claim's, FOR UPDATE), then the documents (lockChunk, in id order), then the account row
 *   (every write of a document takes its document and then the account row: kiln_new_version,
 *   kiln_index_document), then the job row (the marks). A kind whose commits lock documents must lock
 *   them here: two of its commits in one transaction would otherwise hold the account row from the first
 *   while the second waits for a document a content replace holds, which waits for the account row.
 * - `settled(item, prepared, outcome)`, after that transaction, committed or not (`outcome` undefined:
 *   nothing was written): let go of what `prepare` made and nothing references (content to remove).
 * - `onFinished(tx, job)`, in the transaction that moves the job to succeeded, failed or cancelled (an
 *   index marked ready or failed, its event); the job's own event is written by the engine beside it.
 *
 * `creditsPerItem(job)`: credits each document costs (a utility run's steps; 0 for internal kinds),
 * reserved per chunk and given back for the documents that did not succeed.
 *
 * A kind registers in the app's JobKinds (src/app.ts); an internal job is made by code with createJob
 * (service.ts), never through POST /api/v1/jobs, and lists in GET /api/v1/jobs with its kind.
 */
import type { Executor } from "../../db/statement";
import type { JobRecord } from "./statements";

/** A claimed job as a kind sees it: its parameters are the ones its kind stored at submission. */
export type ClaimedJob = Pick<JobRecord, "id" | "accountId" | "kind" | "params" | "onError">;

export interface JobItem {
  job: ClaimedJob;
  seq: number;
  documentId: string;
  /** aborts when the job stops running (cancelled, or failed on another node) */
  signal: AbortSignal;
  /** how many times the item was prepared before, its commits refused with PrepareAgain (0: the first) */
  attempt?: number;
}

/** Thrown by a commit whose prepared work no longer fits (kinds.ts): the item is prepared and committed again. */
export class PrepareAgain extends Error {
  constructor(reason: string) {
    super(reason);
  }
}

export interface ItemProblem {
  code: string;
  message: string;
  errors?: unknown[];
}

/** One document's result, as GET /api/v1/jobs/{id}/results shows it. */
export interface ItemOutcome {
  status: "succeeded" | "failed" | "skipped";
  outputDocumentId?: string;
  version?: number;
  /** report: the output as JSON text */
  output?: string;
  /** why it failed or was skipped */
  error?: ItemProblem;
}

export interface JobKind<Prepared = unknown> {
  readonly kind: string;
  creditsPerItem(job: ClaimedJob): number;
  prepare(item: JobItem): Promise<Prepared>;
  commit(tx: Executor, item: JobItem, prepared: Prepared): Promise<ItemOutcome>;
  lockChunk?(tx: Executor, items: JobItem[]): Promise<void>;
  settled?(item: JobItem, prepared: Prepared, outcome: ItemOutcome | undefined): Promise<void>;
  onFinished?(tx: Executor, job: JobRecord): Promise<void>;
}

/** The kinds a node runs: it claims only jobs of these kinds, and leaves the others to nodes that know them. */
export class JobKinds {
  private readonly kinds = new Map<string, JobKind>();

  register<Prepared>(kind: JobKind<Prepared>): this {
    if (this.kinds.has(kind.kind)) throw new Error(`job kind '${kind.kind}' registered twice`);
    this.kinds.set(kind.kind, kind as JobKind);
    return this;
  }

  get(kind: string): JobKind | undefined {
    return this.kinds.get(kind);
  }

  names(): string[] {
    return [...this.kinds.keys()];
  }
}
