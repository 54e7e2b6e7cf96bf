/**
 * A utility worker thread: imports the registry named by the pool, then runs one job at a time (a
 * utility request's raw bytes, or steps with their inputs; bytes are transferred, never structured-cloned)
 * with the same code as inline runs. The output goes back as UTF-8 bytes, transferred too: posting the
 * JSON text would copy it on the main thread, and the response would have to encode it again
 * (bench/README.md, Utilities). The main thread
 * gives a one-buffer output of a megabyte or more back once it has copied it into the response, for
 * the next output.
 */

import { ERRORS } from "../core/error-codes";
import { HttpError, httpError } from "../core/errors";
import { documentEntries } from "../core/json/index-entries";
import { PatchError, type PatchJob, patchProblemOf, runPatchJob } from "../core/json/patch";
import { CompiledCache, runSchemaJob, type SchemaJob } from "../core/json-schema/check";
import { SchemaBudgetError } from "../core/json-schema/validate";
import type { UtilityRegistry } from "../utilities/registry";
import type { Utility } from "../utilities/types";
import { executeBytes } from "./execute-request";
import { runSteps } from "./execution";
import type { IndexEntriesJob, ToPool, ToWorker, WorkerJob, WorkerOutcome } from "./messages";
import type { RunResult } from "./run-result";
import { currentThreadId, threadPageFaults } from "./thread-memory";

declare const self: Worker;

const threadId = currentThreadId();

let registry: Promise<UtilityRegistry> | undefined;
let maxOutputBytes = Number.POSITIVE_INFINITY;

function find(loaded: UtilityRegistry | undefined, utilityId: string): Utility {
  const utility = loaded?.find(utilityId);
  if (!utility) throw httpError(ERRORS.utility_not_found, `No utility with id '${utilityId}'`);
  return utility;
}

const encoder = new TextEncoder();

/**
 * An earlier output's buffer, given back by the main thread once it was copied into its response: the
 * next output that fits is written into memory already paged in. Kept up to this size, and dropped
 * when the worker has been idle this long, so a worker does not hold the memory of one large run.
 */
const RECYCLED_MAX_BYTES = 32 * 1024 * 1024;
const RECYCLED_IDLE_MS = 30_000;
let recycled: ArrayBuffer | undefined;
let dropRecycled: ReturnType<typeof setTimeout> | undefined;

/** The latest buffer given back replaces an older one: it is sized for the outputs of the work now coming. */
function keepRecycled(buffer: ArrayBuffer): void {
  if (buffer.byteLength > RECYCLED_MAX_BYTES) return;
  recycled = buffer;
  clearTimeout(dropRecycled);
  dropRecycled = setTimeout(() => {
    recycled = undefined;
  }, RECYCLED_IDLE_MS);
}

/**
 * The text as UTF-8, in the recycled buffer when it fits and fills at least half of it, else in a new
 * one with an eighth to spare for a later, larger output. A much smaller output gets its own buffer:
 * sending a large buffer to the main thread and back for a few bytes costs more than its page faults
 * save (small runs right after large ones, bench/README.md, Utilities).
 */
function encoded(text: string): Uint8Array {
  const size = Buffer.byteLength(text);
  let buffer = recycled;
  if (buffer && buffer.byteLength >= size && size * 2 >= buffer.byteLength) recycled = undefined;
  else if (size <= RECYCLED_MAX_BYTES) buffer = new ArrayBuffer(Math.min(size + (size >> 3), RECYCLED_MAX_BYTES));
  else return encoder.encode(text);
  const view = new Uint8Array(buffer, 0, size);
  encoder.encodeInto(text, view);
  return view;
}

/** The output as UTF-8 chunks (one, for a whole-document run), each owning its buffer. */
function asChunks(result: RunResult): RunResult {
  if (!("outputJson" in result)) return result;
  const { outputJson, ...rest } = result;
  return { ...rest, outputChunks: [encoded(outputJson)] };
}

function patched(job: PatchJob): WorkerOutcome {
  const started = performance.now();
  try {
    return { ok: true, outputChunks: [runPatchJob(job)], durationMs: performance.now() - started, stepDurationsMs: [] };
  } catch (error) {
    if (error instanceof PatchError) return { ok: false, ...patchProblemOf(error) };
    throw error;
  }
}

/** Compiled schemas this worker has seen, per schema version: a worker validates the same few schemas again and again. */
const compiledSchemas = new CompiledCache(16 * 1024 * 1024);

function validated(job: SchemaJob): WorkerOutcome {
  const started = performance.now();
  try {
    return {
      ok: true,
      outputJson: JSON.stringify(runSchemaJob(job, compiledSchemas)),
      durationMs: performance.now() - started,
      stepDurationsMs: [],
    };
  } catch (error) {
    if (!(error instanceof SchemaBudgetError)) throw error;
    const entry = ERRORS.schema_validation_too_expensive;
    return {
      ok: false,
      status: entry.status,
      code: entry.code,
      message: `The document could not be validated: ${error.message}; nothing was written`,
    };
  }
}

function indexed(job: IndexEntriesJob): WorkerOutcome {
  const started = performance.now();
  const outputJson = JSON.stringify(documentEntries(job.document, job.indexes, job.limits));
  return { ok: true, outputJson, durationMs: performance.now() - started, stepDurationsMs: [] };
}

async function run(jobId: number, job: WorkerJob): Promise<WorkerOutcome> {
  try {
    const loaded = await registry;
    const pageFaults = threadId === undefined ? undefined : threadPageFaults(threadId);
    self.postMessage({ type: "started", jobId, threadId, pageFaults } satisfies ToPool);
    if (job.kind === "request")
      return { ok: true, ...asChunks(await executeBytes(find(loaded, job.utilityId), job.bytes, maxOutputBytes)) };
    if (job.kind === "patch") return patched(job);
    if (job.kind === "schema") return validated(job);
    if (job.kind === "indexEntries") return indexed(job);
    const steps = job.steps.map(({ utilityId, ...step }) => ({ utility: find(loaded, utilityId), ...step }));
    return { ok: true, ...asChunks(await runSteps(steps, job.primary, job.nameSteps, maxOutputBytes)) };
  } catch (error) {
    if (error instanceof HttpError)
      return {
        ok: false,
        status: error.status,
        code: error.code,
        message: error.message,
        errors: error.extra.errors,
        charged: error.extra.charged,
      };
    return {
      ok: false,
      status: ERRORS.worker_failed.status,
      code: ERRORS.worker_failed.code,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  if (message.type === "recycle") return keepRecycled(message.buffer);
  if (message.type === "init") {
    registry = import(message.registryModule).then((module: { registry: UtilityRegistry }) => module.registry);
    maxOutputBytes = message.maxOutputBytes;
    return;
  }
  const outcome = await run(message.jobId, message.job);
  // the output's chunks move to the main thread rather than being copied
  const transfer = outcome.ok && "outputChunks" in outcome ? outcome.outputChunks.map((chunk) => chunk.buffer as ArrayBuffer) : [];
  self.postMessage({ type: "finished", jobId: message.jobId, outcome } satisfies ToPool, transfer);
};
