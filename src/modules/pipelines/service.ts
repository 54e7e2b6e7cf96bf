/**
 * Saved pipelines (per account) and pipeline runs. A run goes through the utilities engine
 * (executeRun): this module only reads the request and, for a saved pipeline, its steps. A run of a
 * saved pipeline reads the steps once, when it starts: an edit made meanwhile applies to later runs.
 */

import { ERRORS } from "../../core/error-codes";
import { type FieldError, httpError, validationError } from "../../core/errors";
import { newId } from "../../core/keys";
import { normalizeMetadata } from "../../core/metadata";
import type { PipelineRow } from "../../db/schema";
import { readBody, readPipelineRun, readSteps } from "../../engine/run-plan";
import { transferable } from "../../engine/transfers";
import type { Principal } from "../auth/index";
import { decodeCursor, pageOf } from "../documents/cursor";
import type { ResponseBody } from "../utilities/response-body";
import { executeRun, type ReplayRequires, type UtilityEngine } from "../utilities/service";
import type { PipelinesRepository } from "./repository";

export interface PipelinesDeps {
  repository: PipelinesRepository;
  engine: UtilityEngine;
  now: () => number;
}

/** A step as saved and shown: what the client gave, once validated. */
export interface StepDefinition {
  utility: string;
  config?: Record<string, unknown>;
  secondary?: unknown;
  secondaryDocumentId?: string;
}

export interface PipelineInput {
  name?: string;
  description?: string | null;
  steps?: StepDefinition[];
}

export const pipelineView = (row: PipelineRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  steps: row.steps as StepDefinition[],
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const pipelineNotFound = (id: string) => httpError(ERRORS.pipeline_not_found, `No pipeline with id '${id}'`);

/** The normalised fields given; 400 naming every bad one (unknown utilities and configs included). */
function definitionOf(deps: PipelinesDeps, input: PipelineInput) {
  const errors: FieldError[] = [];
  const metadata = normalizeMetadata({ name: input.name, description: input.description }, errors);
  if (input.steps !== undefined) readSteps(input.steps, deps.engine.registry, errors);
  if (errors.length > 0) throw validationError(errors);
  return { ...metadata, ...(input.steps !== undefined ? { steps: input.steps } : {}) };
}

export async function createPipeline(
  deps: PipelinesDeps,
  accountId: string,
  input: PipelineInput & { name: string; steps: StepDefinition[] },
): Promise<PipelineRow> {
  const definition = definitionOf(deps, input);
  const now = deps.now();
  return deps.repository.insert({
    id: newId("pip"),
    accountId,
    name: definition.name!,
    description: definition.description ?? null,
    steps: definition.steps!,
    createdAt: now,
    updatedAt: now,
  });
}

export async function getPipeline(deps: PipelinesDeps, accountId: string, id: string): Promise<PipelineRow> {
  const row = await deps.repository.find(accountId, id);
  if (!row) throw pipelineNotFound(id);
  return row;
}

export async function updatePipeline(deps: PipelinesDeps, accountId: string, id: string, input: PipelineInput): Promise<PipelineRow> {
  if (Object.keys(input).length === 0) throw validationError([{ path: "", message: "give at least one of name, description, steps" }]);
  const row = await deps.repository.update(accountId, id, { ...definitionOf(deps, input), updatedAt: deps.now() });
  if (!row) throw pipelineNotFound(id);
  return row;
}

export async function deletePipeline(deps: PipelinesDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.repository.remove(accountId, id))) throw pipelineNotFound(id);
}

export async function listPipelines(deps: PipelinesDeps, accountId: string, options: { limit: number; cursor?: string }) {
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor, "pip");
  const rows = await deps.repository.list(accountId, { after, limit: options.limit + 1 });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return { pipelines: page, nextCursor };
}

export interface PipelineRunRequest {
  principal: Principal;
  bytes: Uint8Array;
  signal?: AbortSignal;
  onReplay?: ReplayRequires;
  onSavesNothing?: () => void;
  onSchemaWarnings?: (count: number) => void;
}

/** `POST /api/v1/pipelines/run` (steps in the body), or a saved pipeline's run when `saved` is given. */
export function runPipeline(deps: PipelinesDeps, request: PipelineRunRequest, saved?: PipelineRow): Promise<ResponseBody> {
  const { bytes } = request;
  if (bytes.byteLength === 0)
    throw httpError(
      ERRORS.body_required,
      saved ? "A JSON request body `{ inputs, output? }` is required" : "A JSON request body `{ steps, inputs, output? }` is required",
    );
  const body = readBody(transferable(bytes), bytes.byteLength > deps.engine.inlineMaxBytes);
  const reading = readPipelineRun(body, deps.engine.registry, saved?.steps);
  return executeRun(deps.engine, {
    principal: request.principal,
    reading,
    payloadBytes: bytes.byteLength,
    signal: request.signal,
    onReplay: request.onReplay,
    onSavesNothing: request.onSavesNothing,
    onSchemaWarnings: request.onSchemaWarnings,
  });
}
