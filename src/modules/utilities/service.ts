/**
 * Utility execution: lookup, documents as inputs and outputs, credits, and the choice between an inline
 * run (small inputs) and the worker pool (large ones). An inline run holds the event loop for at most
 * its work budget (UTILITY_INLINE_BUDGET_MS): past it, it stops and the same run is done in a worker.
 * Credits (one per step) are reserved before the run and given back when it or its save does not
 * succeed, except when a budget of the run's own stopped it (its time limit, its output budget, an
 * expression's bound): that work was done, so it is paid for. Concurrent runs cannot overspend.
 */
import type { TObject } from "@sinclair/typebox";
import { ERRORS } from "../../core/error-codes";
import { forbidden, HttpError, httpError, validationError } from "../../core/errors";
import { CheckedJson } from "../../core/json/parse";
import type { Db } from "../../db/client";
import { runSteps } from "../../engine/execution";
import type { WorkerPool } from "../../engine/pool";
import {
  type InputRef,
  needsReadingHere,
  type OutputSpec,
  type Reading,
  type RunPlan,
  readBody,
  readUtilityRun,
  usesDocuments,
} from "../../engine/run-plan";
import type { RunResult, Source } from "../../engine/run-result";
import { transferable } from "../../engine/transfers";
import type { Logger } from "../../observability/logger";
import type { Metrics } from "../../observability/metrics";
import type { OpenedContent } from "../../storage/content-store";
import { WorkBudget, WorkBudgetExceededError } from "../../utilities/budget";
import type { UtilityRegistry } from "../../utilities/registry";
import type { Utility } from "../../utilities/types";
import type { Principal } from "../auth/index";
import { contentETag, ifMatchAllows } from "../documents/etag";
import type { WrittenDocument } from "../documents/schema-guard";
import { createDocument, type DocumentsDeps, getDocument, openContent, preconditionFailed, replaceContent } from "../documents/service";
import { creditPeriodStart } from "../usage/service";
import { inWorker } from "./in-worker";
import type { InlineCooldown } from "./inline-cooldown";
import { refundCredits, reserveCredits } from "./repository";
import { outputBytes, type ResponseBody, responseBody } from "./response-body";

export interface UtilityEngine {
  db: Db;
  pool: WorkerPool;
  registry: UtilityRegistry;
  /** runs up to this size go inline, unless a step amplifies (types.ts) */
  inlineMaxBytes: number;
  /** how long an inline run may hold the event loop; past it the run moves to a worker */
  inlineBudgetMs: number;
  /** accounts whose runs skip the main thread for a while, one of theirs having passed the budget */
  inlineCooldown: InlineCooldown;
  maxPayloadBytes: number;
  /** each step's output limit (utilities/budget.ts) */
  maxOutputBytes: number;
  /** stored documents as inputs, and saved outputs */
  documents: DocumentsDeps;
  logger: Logger;
  now: () => number;
  metrics?: Pick<Metrics, "observeUtilityRun" | "observeInlineMoved">;
}

export function getUtility(registry: UtilityRegistry, utilityId: string): Utility {
  const utility = registry.find(utilityId);
  if (!utility) throw httpError(ERRORS.utility_not_found, `No utility with id '${utilityId}'; GET /api/v1/utilities lists them`);
  return utility;
}

export function utilityView(utility: Utility) {
  const { id, name, category, description } = utility;
  return { id, name, category, description, configSchema: publishedSchema(utility.configSchema) };
}

const published = new WeakMap<TObject, object>();

/**
 * The config schema as clients should read it: a field with a default may be omitted, so it is not
 * listed as `required` (the TypeBox schema requires it because `run` always receives it filled in).
 */
export function publishedSchema(schema: TObject): object {
  let result = published.get(schema);
  if (!result) {
    const required = (schema.required ?? []).filter((key) => schema.properties[key]?.default === undefined);
    const { required: _all, ...rest } = schema;
    result = required.length > 0 ? { ...rest, required } : rest;
    published.set(schema, result);
  }
  return result;
}

/** Told what a replay of this run's answer must pass again (http/idempotency.ts requireOnReplay). */
export type ReplayRequires = (needed: { permission?: string; documentIds?: readonly string[] }) => void;

export interface ExecuteRequest {
  principal: Principal;
  utilityId: string;
  bytes: Uint8Array;
  /** aborts when the client goes away */
  signal?: AbortSignal;
  onReplay?: ReplayRequires;
  onSavesNothing?: () => void;
  /** called with the warnings' count when the saved output's folder schema (mode warn) warned about it */
  onSchemaWarnings?: (count: number) => void;
}

/**
 * The success body: JSON text with the output spliced in as the text the run produced, or, for a
 * streamed run, a stream of the same bytes (see responseBody).
 */
export async function executeUtility(engine: UtilityEngine, request: ExecuteRequest): Promise<ResponseBody> {
  const utility = getUtility(engine.registry, request.utilityId);
  const { bytes } = request;
  if (bytes.byteLength === 0) throw httpError(ERRORS.body_required, "A JSON request body `{ inputs: { primary }, config? }` is required");
  const large = bytes.byteLength > engine.inlineMaxBytes;
  if (large && !needsReadingHere(bytes)) {
    // Inline inputs only: the worker reads the whole body, this thread does not parse it. Such a run
    // names no output, so it saves nothing and makes no event to notify.
    request.onSavesNothing?.();
    const result = await withCredits(engine, request.principal.accountId, 1, utility.id, () =>
      inWorker(engine, utility.id, () => engine.pool.run(request.principal.accountId, utility.id, bytes, request.signal)),
    );
    return answer(engine, { steps: [{ utility }], pipeline: false }, result, 1);
  }
  const reading = readUtilityRun(readBody(transferable(bytes), large), utility);
  return executeRun(engine, {
    principal: request.principal,
    reading,
    payloadBytes: bytes.byteLength,
    signal: request.signal,
    onReplay: request.onReplay,
    onSavesNothing: request.onSavesNothing,
    onSchemaWarnings: request.onSchemaWarnings,
  });
}

export interface RunRequest {
  onReplay?: ReplayRequires;
  /** called when the run saves no output: it writes no document, so it makes no event */
  onSavesNothing?: () => void;
  onSchemaWarnings?: (count: number) => void;
  principal: Principal;
  reading: Reading<RunPlan>;
  /** the request body's size: the payload limit counts it with the stored inputs */
  payloadBytes: number;
  signal?: AbortSignal;
}

/**
 * Runs a plan: permission, validation, stored inputs (404, 413 before a byte is read), the saveTo
 * target, credits, the run (inline or one worker hop), the save; the response body.
 */
export async function executeRun(engine: UtilityEngine, request: RunRequest): Promise<ResponseBody> {
  const { principal, reading } = request;
  const plan = reading.value;
  if (usesDocuments(plan) && !principal.permissions.has("documents")) {
    throw forbidden("This run reads or writes documents: the API key needs the 'documents' permission too");
  }
  if (reading.errors.length > 0) throw validationError(reading.errors);
  if (usesDocuments(plan)) request.onReplay?.({ permission: "documents", documentIds: namedDocuments(plan) });
  if (plan.output?.saveAs === undefined && plan.output?.saveTo === undefined) request.onSavesNothing?.();
  const stored = await openStoredInputs(engine.documents, principal.accountId, plan);
  const payloadBytes = [...stored.values()].reduce((sum, content) => sum + content.size, request.payloadBytes);
  if (payloadBytes > engine.maxPayloadBytes) {
    throw httpError(
      ERRORS.payload_too_large,
      `The run's inputs (${payloadBytes} bytes with the stored documents) exceed ${engine.maxPayloadBytes} bytes`,
    );
  }
  if (plan.output?.saveTo !== undefined) await checkSaveTarget(engine.documents, principal.accountId, plan.output);
  // The stored inputs are read while the credits are reserved: a refusal (402) then only wastes the read.
  const reads = Promise.all(
    [...stored].map(async ([id, content]) => [id, await readStored(engine.documents, principal.accountId, id, content)] as const),
  );
  reads.catch(() => {});
  const count = plan.steps.length;
  return withCredits(engine, principal.accountId, count, plan.pipeline ? PIPELINE_RUN : plan.steps[0].utility.id, async () => {
    const bytesOf = new Map(await reads);
    const source = (input: InputRef): Source => ("source" in input ? input.source : { json: bytesOf.get(input.documentId)! });
    const primary = source(plan.primary);
    const steps = plan.steps.map(({ secondary, ...step }) => ({ ...step, ...(secondary ? { secondary: source(secondary) } : {}) }));
    const inline = payloadBytes <= engine.inlineMaxBytes && !plan.steps.some((step) => step.utility.amplifies);
    const inPool = () =>
      inWorker(engine, plan.steps[0].utility.id, () =>
        engine.pool.runSteps(
          principal.accountId,
          { steps: steps.map(({ utility, ...step }) => ({ utilityId: utility.id, ...step })), primary, nameSteps: plan.pipeline },
          request.signal,
        ),
      );
    const result = inline ? await inlineFirst(engine, principal.accountId, plan, steps, primary, inPool) : await inPool();
    const document = plan.output && (await saveOutput(engine.documents, principal.accountId, plan.output, result));
    if (document) request.onReplay?.({ documentIds: [document.id] });
    if (document?.schemaWarnings) request.onSchemaWarnings?.(document.schemaWarnings.warnings.length);
    return answer(engine, plan, result, count, document);
  });
}

/**
 * The run on this thread within its work budget; past it, the same run in a worker (utilities are pure,
 * and their inputs are read, never changed, so the answer is the one the inline run would have given),
 * and the account's next runs, until a while after that one ends, straight in a worker.
 */
async function inlineFirst(
  engine: UtilityEngine,
  accountId: string,
  plan: RunPlan,
  steps: Parameters<typeof runSteps>[0],
  primary: Source,
  inPool: () => Promise<RunResult>,
): Promise<RunResult> {
  const runLabel = plan.pipeline ? PIPELINE_RUN : plan.steps[0].utility.id;
  if (engine.inlineCooldown.active(accountId, engine.now())) {
    engine.metrics?.observeInlineMoved(runLabel, "account");
    return inPool();
  }
  try {
    return await runSteps(steps, primary, plan.pipeline, engine.maxOutputBytes, new WorkBudget(engine.inlineBudgetMs));
  } catch (error) {
    if (!(error instanceof WorkBudgetExceededError)) throw error;
    engine.inlineCooldown.start(accountId, engine.now());
    engine.metrics?.observeInlineMoved(runLabel, "budget");
    try {
      return await inPool();
    } finally {
      // the cooldown covers the run's time in the worker too, however long it waited or ran there
      engine.inlineCooldown.start(accountId, engine.now());
    }
  }
}

/** The documents a plan reads or writes: a replay of its answer needs them still there. */
function namedDocuments(plan: RunPlan): string[] {
  const inputs = [plan.primary, ...plan.steps.map((step) => step.secondary)];
  const ids = inputs.flatMap((input) => (input && "documentId" in input ? [input.documentId] : []));
  return plan.output?.saveTo ? [...ids, plan.output.saveTo] : ids;
}

/** The stored inputs, opened but not read: 404 for another account's or a deleted document. */
async function openStoredInputs(documents: DocumentsDeps, accountId: string, plan: RunPlan): Promise<Map<string, OpenedContent>> {
  const opened = new Map<string, OpenedContent>();
  for (const input of [plan.primary, ...plan.steps.map((step) => step.secondary)]) {
    if (input && "documentId" in input && !opened.has(input.documentId)) {
      opened.set(input.documentId, (await openContent(documents, accountId, input.documentId)).content);
    }
  }
  return opened;
}

/** The opened content's bytes; if it was replaced or purged since it was opened, the current content (or 404). */
async function readStored(documents: DocumentsDeps, accountId: string, id: string, opened: OpenedContent): Promise<Uint8Array> {
  try {
    return await opened.body.bytes();
  } catch {
    return (await openContent(documents, accountId, id)).content.body.bytes();
  }
}

/** saveTo's document must exist (and match ifMatch) before credits are taken; the save checks again under lock. */
async function checkSaveTarget(documents: DocumentsDeps, accountId: string, output: OutputSpec): Promise<void> {
  const target = await getDocument(documents, accountId, output.saveTo!);
  const current = contentETag(target.contentHash);
  if (!ifMatchAllows(output.ifMatch ?? null, current)) throw preconditionFailed(current);
}

function saveOutput(
  documents: DocumentsDeps,
  accountId: string,
  output: OutputSpec,
  result: RunResult,
): Promise<WrittenDocument> | undefined {
  if (!output.saveAs && output.saveTo === undefined) return undefined;
  const content = new CheckedJson(outputBytes(result));
  if (output.saveAs) return createDocument(documents, accountId, { ...output.saveAs, content }, undefined);
  if (output.saveTo !== undefined) return replaceContent(documents, accountId, output.saveTo, content, { ifMatch: output.ifMatch ?? null });
  return undefined;
}

/** The response body; a worker's single output buffer, copied into it (or not sent), goes back to the worker. */
function answer(engine: UtilityEngine, ...[plan, result, credits, document]: Parameters<typeof responseBody>): ResponseBody {
  const body = responseBody(plan, result, credits, document);
  if ("outputChunks" in result && result.outputChunks.length === 1) engine.pool.recycle(result.outputChunks[0]);
  return body;
}

/** The metrics label of a pipeline run (its steps run as one); a single run is labelled by its utility id. */
const PIPELINE_RUN = "pipeline";

/**
 * Reserves `count` credits (402 when they are not there), runs, gives them back when the run fails
 * unless one of its budgets stopped it (a `charged` error); the run is measured under `runLabel`.
 */
async function withCredits<T>(
  engine: UtilityEngine,
  accountId: string,
  count: number,
  runLabel: string,
  work: () => Promise<T>,
): Promise<T> {
  const periodStart = creditPeriodStart(engine.now());
  if (!(await reserveCredits(engine.db, accountId, periodStart, count))) {
    const needed = count === 1 ? "" : ` (this run needs ${count}, one per step)`;
    throw httpError(
      ERRORS.credits_exhausted,
      `The account's monthly utility credits are used up${needed}; they renew on the first day of next month (UTC)`,
    );
  }
  const started = performance.now();
  try {
    const result = await work();
    engine.metrics?.observeUtilityRun(runLabel, "ok", (performance.now() - started) / 1000);
    return result;
  } catch (error) {
    engine.metrics?.observeUtilityRun(
      runLabel,
      error instanceof HttpError ? error.code : "internal_error",
      (performance.now() - started) / 1000,
    );
    if (!(error instanceof HttpError && error.extra.charged)) await refundCredits(engine.db, accountId, periodStart, count);
    throw error;
  }
}
