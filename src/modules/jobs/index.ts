/**
 * Jobs (permissions `utilities` and `documents`): a utility, a saved pipeline or steps over many
 * documents in the background, with progress, cancel and per-document results. The work is done by the
 * runner (runner.ts) on every node; this module's routes submit, list, read and cancel jobs.
 */
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import type { IdempotencyHooks } from "../../http/idempotency";
import { NdjsonLines, operation } from "../../http/openapi";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { listLimit } from "../documents/listing";
import { LIMIT_PARAMETER } from "../documents/model";
import { CreateJobBody, JobListQuery, JobListResponse, JobParams, JobResponse, JobResult } from "./model";
import { jobView } from "./repository";
import { resultsStream } from "./results";
import { cancel, getJob, type JobsDeps, listAccountJobs, requireDocumentsToo, submitJob } from "./service";

const NOT_FOUND = { 404: problems`${ERRORS.job_not_found} (also another account's)` };
const FORBIDDEN = { 403: problems`${ERRORS.forbidden}: the key lacks the documents permission (jobs need utilities and documents)` };

export const jobsModule = (deps: JobsDeps & { auth: AuthPlugin; idempotency: IdempotencyHooks }) => {
  const principalOf = (principal: Parameters<typeof requirePrincipal>[0]) => {
    const found = requirePrincipal(principal);
    requireDocumentsToo(found);
    return found;
  };
  return new Elysia({ name: "kiln.jobs", prefix: "/api/v1/jobs", detail: { tags: ["Jobs"] } })
    .use(deps.auth)
    .post(
      "",
      async ({ principal, body, set }) => {
        const row = await submitJob(deps, principalOf(principal), body);
        set.status = 202;
        set.headers.Location = `/api/v1/jobs/${row.id}`;
        return { success: true as const, job: jobView(row) };
      },
      {
        ...deps.idempotency,
        body: CreateJobBody,
        response: { 202: JobResponse },
        detail: operation({
          operationId: "createJob",
          summary: "Run a utility or a pipeline over many documents, in the background",
          description:
            "Everything is checked before the job is queued: the source's documents (read now), the utility and its config, the pipeline, the output. Follow the job at Location; its results at /results.",
          errors: {
            400: problems`${ERRORS.validation_failed} (source, config, steps, output, onError), ${ERRORS.job_source_empty} (a folder with no document), ${ERRORS.query_needs_index} or ${ERRORS.query_invalid} (a query source: docs/query.md)`,
            ...FORBIDDEN,
            404: problems`${ERRORS.utility_not_found}, ${ERRORS.pipeline_not_found} (also another account's), ${ERRORS.document_not_found} (a documentIds entry)`,
            413: problems`${ERRORS.job_too_large} (more documents than JOBS_MAX_DOCUMENTS)`,
            429: problems`${ERRORS.too_many_jobs} (the plan's maxQueuedJobs wait already)`,
          },
          headers: { 202: ["Location"] },
          idempotent: { success: 202 },
        }),
      },
    )
    .get(
      "",
      async ({ principal, query }) => {
        const { jobs, nextCursor } = await listAccountJobs(deps, principalOf(principal).accountId, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
          state: query.state,
        });
        return { success: true as const, jobs, nextCursor };
      },
      {
        query: JobListQuery,
        response: { 200: JobListResponse },
        detail: {
          ...operation({
            operationId: "listJobs",
            summary: "List jobs",
            description:
              "Newest first, every kind. state= keeps the jobs in one state. Pass nextCursor as cursor for the next page; null means no more.",
            errors: { 400: problems`${ERRORS.validation_failed} (limit, state) or ${ERRORS.invalid_cursor}`, ...FORBIDDEN },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        success: true as const,
        job: jobView(await getJob(deps, principalOf(principal).accountId, params.id)),
      }),
      {
        params: JobParams,
        response: { 200: JobResponse },
        detail: operation({ operationId: "getJob", summary: "A job, with its progress", errors: { ...FORBIDDEN, ...NOT_FOUND } }),
      },
    )
    .post(
      "/:id/cancel",
      async ({ principal, params }) => ({
        success: true as const,
        job: jobView(await cancel(deps, principalOf(principal).accountId, params.id)),
      }),
      {
        params: JobParams,
        response: { 200: JobResponse },
        detail: operation({
          operationId: "cancelJob",
          summary: "Cancel a job",
          description:
            "A queued job is cancelled at once; a running one is cancelling until its chunks in work stop (within a second), then cancelled. What it wrote stays: the documents already processed keep their new versions or outputs.",
          errors: { ...FORBIDDEN, ...NOT_FOUND, 409: problems`${ERRORS.job_finished}` },
        }),
      },
    )
    .get(
      "/:id/results",
      async ({ principal, params }) => {
        const job = await getJob(deps, principalOf(principal).accountId, params.id);
        return new Response(resultsStream(deps.database.db, job.id), { headers: { "Content-Type": "application/x-ndjson" } });
      },
      {
        params: JobParams,
        detail: operation({
          operationId: "getJobResults",
          summary: "A job's results, as NDJSON",
          description:
            "One line per document processed so far, in the job's order: succeeded (with the version written or the new document), failed (with the error) or skipped (with the reason). Streamed: any size.",
          errors: { ...FORBIDDEN, ...NOT_FOUND },
          responses: {
            200: {
              description: "One line per document processed",
              content: { "application/x-ndjson": new NdjsonLines(JobResult, "one line per document, in the job's order") },
            },
          },
        }),
      },
    );
};
