/** Checks against a schema that write nothing: the dry run, and the audit of the governed folders. */
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { rawBody } from "../../../http/body";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { JobResponse } from "../../jobs/model";
import { jobView } from "../../jobs/repository";
import { startAudit } from "../audit";
import { dryRun } from "../checks";
import { SchemaParams, ValidateBody, ValidateResponse } from "../model";
import type { SchemaRoutesDeps } from "./common";

export const checkRoutes = (deps: SchemaRoutesDeps) =>
  new Elysia({ prefix: "/api/v1/schemas", detail: { tags: ["Schemas"] } })
    .use(deps.auth)
    .post(
      "/:id/validate",
      async ({ principal, params, body, request }) => {
        const outcome = await dryRun(deps, deps.documents, requirePrincipal(principal).accountId, params.id, body, rawBody(request));
        return { success: true as const, valid: outcome.valid, errors: outcome.errors };
      },
      {
        params: SchemaParams,
        body: ValidateBody,
        response: { 200: ValidateResponse },
        detail: operation({
          operationId: "validateAgainstSchema",
          summary: "Dry run: validate content or a stored document",
          description:
            "Against the schema's current version, exactly as a write into its folders would be; nothing is written, whatever the schema's mode.",
          errors: {
            400: problems`${ERRORS.validation_failed} (exactly one of content and documentId)`,
            404: problems`${ERRORS.schema_not_found} or ${ERRORS.document_not_found}`,
            413: problems`${ERRORS.schema_validation_too_expensive}: the validation ran past its time or depth budget`,
          },
        }),
      },
    )
    .post(
      "/:id/audit",
      async ({ principal, params, set }) => {
        const job = await startAudit(deps, deps.jobs, requirePrincipal(principal).accountId, params.id);
        set.status = 202;
        set.headers.Location = `/api/v1/jobs/${job.id}`;
        return { success: true as const, job: jobView(job) };
      },
      {
        params: SchemaParams,
        response: { 202: JobResponse },
        detail: operation({
          operationId: "auditSchema",
          summary: "Audit the documents a schema governs, as a job",
          description:
            "A job of kind schemaAudit over every document of the governed folders (and their subfolders no nearer schema governs), checked against the schema's current version; nothing is written and no credit used. Its results (GET /api/v1/jobs/{id}/results, with a key holding the utilities and documents permissions) list each document: succeeded when it matches, failed with error.errors as in a 422.",
          errors: {
            400: problems`${ERRORS.job_source_empty}: the schema governs no document`,
            404: problems`${ERRORS.schema_not_found}`,
            413: problems`${ERRORS.job_too_large}: it governs more than JOBS_MAX_DOCUMENTS documents`,
          },
          headers: { 202: ["Location"] },
        }),
      },
    );
