/**
 * The rules of the Jobs API: what a submission must name (every problem is a 4xx before anything is
 * queued, never a job that fails later), the account's limits, and the views. createJob is also how
 * other modules make internal jobs of their own kinds.
 */
import type { JobsConfig } from "../../config";
import { ERRORS } from "../../core/error-codes";
import { type FieldError, forbidden, httpError, validationError } from "../../core/errors";
import { newId } from "../../core/keys";
import { normalizeMetadata } from "../../core/metadata";
import type { Database } from "../../db/client";
import type { Executor } from "../../db/statement";
import { readSteps } from "../../engine/run-plan";
import type { UtilityRegistry } from "../../utilities/registry";
import type { Principal } from "../auth/index";
import { decodeCursor, pageOf } from "../documents/cursor";
import type { DocumentsRepository } from "../documents/repository";
import type { PipelinesRepository } from "../pipelines/repository";
import type { StepDefinition } from "../pipelines/service";
import { cancelJob, findJob, insertJob, insertJobIn, type JobRecord, jobView, listJobs } from "./repository";
import type { JobOutput, UtilityJobParams } from "./utility-kind";

/** Resolves a `{ query }` source to the ids of the documents it matches, at most `limit` + 1 (the query module fills it). */
export type QueryResolver = (accountId: string, query: { folder?: string; filter?: unknown }, limit: number) => Promise<string[]>;

export interface JobsDeps {
  database: Database;
  documents: DocumentsRepository;
  pipelines: PipelinesRepository;
  registry: UtilityRegistry;
  config: JobsConfig;
  now: () => number;
  /** a `{ query }` source (modules/query, matchingIds); without it such a source is refused with job_source_unsupported */
  resolveQuery?: QueryResolver;
}

export type JobSource = { folder: string } | { query: { folder?: string; filter?: unknown } } | { documentIds: string[] };

export interface JobSubmission {
  source: JobSource;
  utility?: string;
  config?: Record<string, unknown>;
  pipelineId?: string;
  steps?: StepDefinition[];
  output: JobOutput;
  onError?: "continue" | "stop";
}

/** The one seam between a source and the documents it names: their ids, in the order the job goes over them. */
export async function resolveSource(deps: JobsDeps, accountId: string, source: JobSource): Promise<string[]> {
  const limit = deps.config.maxDocuments;
  let ids: string[];
  if ("documentIds" in source) {
    ids = [...new Set(source.documentIds)];
    const present = new Set(await deps.documents.presentIds(accountId, ids));
    const missing = ids.filter((id) => !present.has(id));
    if (missing.length > 0)
      throw httpError(
        ERRORS.document_not_found,
        `No document with id ${missing
          .slice(0, 5)
          .map((id) => `'${id}'`)
          .join(", ")}${missing.length > 5 ? ` (and ${missing.length - 5} more)` : ""}`,
      );
  } else if ("folder" in source) {
    const errors: FieldError[] = [];
    const folder = normalizeMetadata({ folder: source.folder }, errors).folder;
    if (errors.length > 0 || !folder)
      throw validationError(
        errors.length > 0 ? errors.map((e) => ({ ...e, path: "/source/folder" })) : [{ path: "/source/folder", message: "required" }],
      );
    ids = await deps.documents.idsInFolder(accountId, folder, limit + 1);
  } else {
    if (!deps.resolveQuery)
      throw httpError(
        ERRORS.job_source_unsupported,
        "A { query } source is not available on this server yet; give { folder } or { documentIds }",
      );
    ids = await deps.resolveQuery(accountId, source.query, limit + 1);
  }
  if (ids.length === 0) throw httpError(ERRORS.job_source_empty, "The job's source names no document: there is nothing to do");
  if (ids.length > limit)
    throw httpError(
      ERRORS.job_too_large,
      `The job's source holds more than ${limit} documents (JOBS_MAX_DOCUMENTS); split it into several jobs`,
    );
  return ids;
}

/** The steps a utility job runs, validated as a run's would be: one of utility (+ config), pipelineId, steps. */
async function stepsOf(deps: JobsDeps, accountId: string, body: JobSubmission): Promise<Pick<UtilityJobParams, "steps" | "pipeline">> {
  const given = [body.utility, body.pipelineId, body.steps].filter((value) => value !== undefined).length;
  if (given !== 1) throw validationError([{ path: "", message: "give exactly one of utility (with config), pipelineId, steps" }]);
  if (body.config !== undefined && body.utility === undefined)
    throw validationError([{ path: "/config", message: "config goes with utility (a pipeline's steps carry their own)" }]);
  let steps: StepDefinition[];
  if (body.utility !== undefined) {
    if (!deps.registry.find(body.utility))
      throw httpError(ERRORS.utility_not_found, `No utility with id '${body.utility}'; GET /api/v1/utilities lists them`);
    steps = [{ utility: body.utility, ...(body.config !== undefined ? { config: body.config } : {}) }];
  } else if (body.pipelineId !== undefined) {
    const pipeline = await deps.pipelines.find(accountId, body.pipelineId);
    if (!pipeline) throw httpError(ERRORS.pipeline_not_found, `No pipeline with id '${body.pipelineId}'`);
    steps = pipeline.steps as StepDefinition[];
  } else steps = body.steps!;
  const errors: FieldError[] = [];
  readSteps(steps, deps.registry, errors);
  if (steps.some((step) => step.secondaryDocumentId !== undefined))
    errors.push({ path: "/steps", message: "a job's steps take their second input inline (secondary), not secondaryDocumentId" });
  if (errors.length > 0)
    throw validationError(
      body.utility !== undefined ? errors.map((error) => ({ ...error, path: error.path.replace(/^\/steps\/0/, "") })) : errors,
    );
  return { steps, pipeline: body.utility === undefined };
}

export function requireDocumentsToo(principal: Principal): void {
  if (!principal.permissions.has("documents"))
    throw forbidden("Jobs read and write documents: the API key needs the 'documents' permission too");
}

export interface NewInternalJob {
  accountId: string;
  kind: string;
  documentIds: string[];
  params: unknown;
  onError?: "continue" | "stop";
}

/**
 * An internal job (an index build, a schema audit): made by Kiln, never refused for the account's
 * queue; in the transaction `on` when given (an index's build is made with the index).
 */
export async function createJob(deps: Pick<JobsDeps, "database" | "now">, job: NewInternalJob, on?: Executor): Promise<JobRecord> {
  const row = { ...job, id: newId("job"), onError: job.onError ?? "continue", internal: true, now: deps.now() } as const;
  return (on ? await insertJobIn(on, row) : await insertJob(deps.database, row))!;
}

/** POST /api/v1/jobs: everything checked, then the job queued with its items. */
export async function submitJob(deps: JobsDeps, principal: Principal, body: JobSubmission): Promise<JobRecord> {
  requireDocumentsToo(principal);
  const { accountId } = principal;
  const work = await stepsOf(deps, accountId, body);
  let output = body.output;
  if (output.mode === "saveAs") {
    const errors: FieldError[] = [];
    const folder = normalizeMetadata({ folder: output.folder }, errors).folder;
    if (errors.length > 0 || !folder)
      throw validationError([{ path: "/output/folder", message: errors[0]?.message ?? "required: a folder" }]);
    output = { mode: "saveAs", folder };
  }
  const documentIds = await resolveSource(deps, accountId, body.source);
  const params: UtilityJobParams = { ...work, output };
  const row = await insertJob(deps.database, {
    id: newId("job"),
    accountId,
    kind: "utility",
    params,
    onError: body.onError ?? "continue",
    documentIds,
    internal: false,
    now: deps.now(),
  });
  if (!row)
    throw httpError(
      ERRORS.too_many_jobs,
      "The account already has its most jobs waiting to run (its plan's maxQueuedJobs); retry once one has started",
      {
        headers: { "Retry-After": "5" },
      },
    );
  return row;
}

export async function getJob(deps: JobsDeps, accountId: string, id: string): Promise<JobRecord> {
  const row = await findJob(deps.database.db, accountId, id);
  if (!row) throw httpError(ERRORS.job_not_found, `No job with id '${id}'`);
  return row;
}

export async function listAccountJobs(deps: JobsDeps, accountId: string, options: { limit: number; cursor?: string; state?: string }) {
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor, "job");
  const rows = await listJobs(deps.database.db, accountId, { after, limit: options.limit + 1, state: options.state });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return { jobs: page.map(jobView), nextCursor };
}

export async function cancel(deps: JobsDeps, accountId: string, id: string): Promise<JobRecord> {
  const row = await cancelJob(deps.database, accountId, id, deps.now());
  if (row) return row;
  const current = await getJob(deps, accountId, id);
  if (current.state === "cancelling") return current;
  throw httpError(ERRORS.job_finished, `Job '${id}' has already finished (${current.state}); there is nothing to cancel`);
}
