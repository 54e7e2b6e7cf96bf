/**
 * The "utility" job kind (POST /api/v1/jobs): a utility with its config, a saved pipeline's steps or
 * steps given, over each document, with the output as the document's new version, as a new document in
 * another folder, or only in the results. The steps are those validated at submission, stored with the
 * job; they run in the worker pool, under the account's worker share, as a stored-input run would.
 *
 * newVersion: the output is adopted only if the document's content is still the one the job read (its
 * hash, checked under the row lock of kiln_new_version in the item's transaction); otherwise the document
 * is skipped with document_changed, and the content the job wrote for it is removed again.
 *
 * An account's index declared or dropped while the job runs makes the output's index entries stale: the
 * commit is refused (index_set_changed) and the engine prepares the document again (PrepareAgain).
 *
 * An output bound for a governed folder (the document's own for newVersion, output.folder for saveAs) is
 * validated against that folder's schema before it is stored: mode reject fails the document with
 * schema_violation and its errors; mode warn stores it, and its schema.violated event is recorded once
 * the item's transaction has committed.
 */
import { ERRORS } from "../../core/error-codes";
import { httpError, validationError } from "../../core/errors";
import { newId } from "../../core/keys";
import type { StepsJob } from "../../engine/messages";
import type { WorkerPool } from "../../engine/pool";
import { readSteps } from "../../engine/run-plan";
import type { Source } from "../../engine/run-result";
import type { Logger } from "../../observability/logger";
import type { StoredContent } from "../../storage/content-store";
import type { UtilityRegistry } from "../../utilities/registry";
import { entriesIfIndexed, type IndexedContent, indexConflict } from "../documents/indexing";
import { quotaError } from "../documents/quota";
import { checkedForWrite, type SchemaWarnings } from "../documents/schema-guard";
import { type DocumentsDeps, documentNotFound, openContent } from "../documents/service";
import { inWorker } from "../utilities/in-worker";
import { outputBytes } from "../utilities/response-body";
import { type ItemOutcome, type JobItem, type JobKind, PrepareAgain } from "./kinds";

export type JobOutput = { mode: "newVersion" } | { mode: "saveAs"; folder: string } | { mode: "report" };

/** What a utility job stores at submission. */
export interface UtilityJobParams {
  steps: { utility: string; config?: Record<string, unknown>; secondary?: unknown }[];
  /** steps of a pipeline: errors name the failing step */
  pipeline: boolean;
  output: JobOutput;
}

export interface UtilityKindDeps {
  documents: DocumentsDeps;
  pool: WorkerPool;
  registry: UtilityRegistry;
  logger: Logger;
  reportOutputMaxBytes: number;
  /** UTILITY_MAX_PAYLOAD_BYTES: a larger document fails as a single run on it would */
  maxPayloadBytes: number;
}

type Prepared =
  | { missing: true }
  | {
      missing?: false;
      readHash: string;
      name: string;
      tags: string[];
      description: string | null;
      stored?: StoredContent;
      output?: string;
      /** where the output lands, and what its schema (mode warn) said of it */
      folder?: string | null;
      warnings?: SchemaWarnings;
      /** no schema checked the output, the account binding no folder as this node knew: the commit makes sure */
      unbound?: boolean;
      /** the output's query index entries, computed here, outside the item's transaction */
      indexed?: IndexedContent;
    };

const decoder = new TextDecoder();

/**
 * A node's job runs of one account in the worker pool at once: one running and one waiting, so the
 * account's own requests keep the rest of its queue (UTILITY_QUEUE_PER_ACCOUNT) however many documents
 * a job prepares at once (their lookups and content writes overlap the runs), and the documents read
 * into memory for the account's jobs are those two (plus the outputs on their way to the store).
 */
const RUNS_PER_ACCOUNT = 2;

/** Turns in the pool per account, first come first served. */
class AccountTurns {
  private readonly held = new Map<string, { count: number; waiting: (() => void)[] }>();

  async run<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    let entry = this.held.get(accountId);
    if (!entry) this.held.set(accountId, (entry = { count: 0, waiting: [] }));
    if (entry.count >= RUNS_PER_ACCOUNT) await new Promise<void>((resolve) => entry!.waiting.push(resolve));
    else entry.count++;
    try {
      return await work();
    } finally {
      const next = entry.waiting.shift();
      if (next) next();
      else if (--entry.count === 0) this.held.delete(accountId);
    }
  }
}

const indexesChanged = () =>
  new PrepareAgain("The account's query indexes changed while the document was being written; retried too often");

const schemasChanged = () => new PrepareAgain("The account's schemas changed while the document was being written; retried too often");

const documentChanged = (id: string) =>
  httpError(ERRORS.document_changed, `Document '${id}' changed since the job read it; the job's output for it was not written`);

export function utilityJobKind(deps: UtilityKindDeps): JobKind<Prepared> {
  const { documents } = deps;
  const turns = new AccountTurns();
  // the steps read once per claimed chunk: its items share one params object
  const planned = new WeakMap<UtilityJobParams, StepsJob["steps"]>();
  const stepsOf = (params: UtilityJobParams): StepsJob["steps"] => {
    let steps = planned.get(params);
    if (steps) return steps;
    const errors: { path: string; message: string }[] = [];
    const read = readSteps(params.steps, deps.registry, errors);
    // validated at submission: a utility removed from the registry since then fails every document
    if (errors.length > 0) throw validationError(errors);
    steps = read.map(({ utility, config, secondary }) => ({
      utilityId: utility.id,
      config,
      ...(secondary && "source" in secondary ? { secondary: secondary.source as Source } : {}),
    }));
    planned.set(params, steps);
    return steps;
  };

  return {
    kind: "utility",
    creditsPerItem: (job) => (job.params as UtilityJobParams).steps.length,

    async prepare(item: JobItem): Promise<Prepared> {
      const params = item.job.params as UtilityJobParams;
      const accountId = item.job.accountId;
      let opened: Awaited<ReturnType<typeof openContent>>;
      try {
        opened = await openContent(documents, accountId, item.documentId);
      } catch (error) {
        if ((error as { code?: string }).code === ERRORS.document_not_found.code) return { missing: true };
        throw error;
      }
      const { row, content } = opened;
      if (content.size > deps.maxPayloadBytes)
        throw httpError(
          ERRORS.payload_too_large,
          `The document (${content.size} bytes) exceeds ${deps.maxPayloadBytes} bytes (UTILITY_MAX_PAYLOAD_BYTES)`,
        );
      // read within the turn: the documents a node holds in memory for one account's jobs are the two it runs
      const result = await turns.run(accountId, async () => {
        const bytes = new Uint8Array(await content.body.arrayBuffer());
        return inWorker(deps, params.steps[0]!.utility, () =>
          deps.pool.runSteps(accountId, { steps: stepsOf(params), primary: { json: bytes }, nameSteps: params.pipeline }, item.signal),
        );
      });
      const output = outputBytes(result);
      const kept = { readHash: row.contentHash, name: row.name, tags: row.tags, description: row.description };
      if (params.output.mode === "report") {
        if (output.byteLength > deps.reportOutputMaxBytes)
          throw httpError(
            ERRORS.result_too_large,
            `The output (${output.byteLength} bytes) exceeds what a report keeps per document (JOBS_REPORT_OUTPUT_MAX_BYTES, ${deps.reportOutputMaxBytes})`,
          );
        return { ...kept, output: decoder.decode(output) };
      }
      const folder = params.output.mode === "saveAs" ? params.output.folder : row.folder;
      // a try after an index_set_changed or schemas_changed refusal reads the account's indexes and schemas afresh
      const fresh = (item.attempt ?? 0) > 0;
      const { warnings, unbound } = await checkedForWrite(documents.schemaGuard, accountId, () => folder, output, fresh);
      const indexed = await entriesIfIndexed(documents.indexer, accountId, () => folder, output, fresh);
      return { ...kept, folder, warnings, unbound, indexed, stored: await documents.store.put(output) };
    },

    async commit(tx, item, prepared): Promise<ItemOutcome> {
      if (prepared.missing) return skipped(documentNotFound(item.documentId));
      const { accountId } = item.job;
      const output = (item.job.params as UtilityJobParams).output;
      if (output.mode === "report") return { status: "succeeded", output: prepared.output };
      const stored = prepared.stored!;
      const now = documents.now();
      if (output.mode === "saveAs") {
        const created = await documents.repository.create(
          {
            id: newId("doc"),
            accountId,
            name: prepared.name,
            description: prepared.description,
            tags: prepared.tags,
            folder: output.folder,
            fileSize: stored.size,
            contentHash: stored.hash,
            contentKey: stored.key,
            createdAt: now,
            updatedAt: now,
          },
          prepared.indexed,
          tx,
          prepared.unbound,
        );
        if (created.outcome === "index_set_changed") throw indexesChanged();
        if (created.outcome === "schemas_changed") throw schemasChanged();
        if (created.outcome === "index_conflict") throw indexConflict(created.index, created.document);
        if (created.outcome !== "stored") throw quotaError(created.outcome, stored.size);
        return { status: "succeeded", outputDocumentId: created.document.id, version: 1 };
      }
      const written = await documents.repository.newVersion(
        {
          accountId,
          documentId: item.documentId,
          acceptedHashes: [prepared.readHash],
          ...storedFields(stored),
          now,
          indexed: prepared.indexed,
          unbound: prepared.unbound,
        },
        tx,
      );
      if (written.outcome === "index_set_changed") throw indexesChanged();
      if (written.outcome === "schemas_changed") throw schemasChanged();
      if (written.outcome === "index_conflict") throw indexConflict(written.index, written.document);
      switch (written.outcome) {
        case "stored":
          released.set(item, written.released);
          return { status: "succeeded", version: written.document.contentVersion };
        case "not_found":
          return skipped(documentNotFound(item.documentId));
        case "precondition_failed":
          return skipped(documentChanged(item.documentId));
        default:
          throw quotaError(written.outcome, stored.size);
      }
    },

    // newVersion locks each document (kiln_new_version) and then the account row: the chunk's documents first, in id order
    async lockChunk(tx, items) {
      if ((items[0]?.job.params as UtilityJobParams | undefined)?.output.mode !== "newVersion") return;
      await documents.repository.lockDocuments(
        tx,
        items.map((item) => item.documentId),
        "update",
      );
    },

    async settled(item, prepared, outcome) {
      const keys = released.get(item);
      released.delete(item);
      if (prepared.missing || !prepared.stored) return;
      if (outcome?.status !== "succeeded") return documents.store.remove(prepared.stored.key);
      for (const key of keys ?? []) documents.retirer.retire(key);
      if (prepared.warnings && documents.schemaGuard) {
        const written = {
          id: outcome.outputDocumentId ?? item.documentId,
          name: prepared.name,
          folder: prepared.folder ?? null,
          contentVersion: outcome.version ?? 1,
        };
        await documents.schemaGuard.warned(item.job.accountId, written, prepared.warnings);
      }
    },
  };
}

/** Content keys a committed new version no longer references, retired once its transaction has committed. */
const released = new WeakMap<JobItem, string[]>();

const storedFields = (stored: StoredContent) => ({ size: stored.size, hash: stored.hash, key: stored.key });

function skipped(error: { code: string; message: string }): ItemOutcome {
  return { status: "skipped", error: { code: error.code, message: error.message } };
}
