/** Pipelines (permission `utilities`): runs of several utilities in one request, and saved pipelines. */

import { Elysia } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { RawBody } from "../../http/body";
import { markNoEvents } from "../../http/context";
import { type IdempotencyHooks, requireOnReplay } from "../../http/idempotency";
import { operation } from "../../http/openapi";
import { type AuthPlugin, type Principal, requirePrincipal } from "../auth/index";
import { listLimit } from "../documents/listing";
import { LIMIT_PARAMETER } from "../documents/model";
import { type ResponseBody, schemaWarningsHeader } from "../utilities/response-body";
import {
  CreatePipelineBody,
  PipelineDeleted,
  PipelineListQuery,
  PipelineListResponse,
  PipelineParams,
  PipelineResponse,
  PipelineRunResponse,
  RunPipelineBody,
  RunSavedPipelineBody,
  UpdatePipelineBody,
} from "./model";
import {
  createPipeline,
  deletePipeline,
  getPipeline,
  listPipelines,
  type PipelinesDeps,
  pipelineView,
  runPipeline,
  updatePipeline,
} from "./service";

/** The run routes, as Elysia names them: their bodies are read raw (inline inputs may go to a worker unparsed). */
export const PIPELINE_RUN_ROUTES = ["/api/v1/pipelines/run", "/api/v1/pipelines/:id/run"] as const;
/** The routes whose bodies are a pipeline definition, held to PIPELINE_DEFINITION_MAX_BYTES. */
export const PIPELINE_DEFINITION_ROUTES = ["/api/v1/pipelines", "/api/v1/pipelines/:id"] as const;
export const PIPELINE_DEFINITION_MAX_BYTES = 1024 * 1024;

const jsonResponse = (body: ResponseBody, headers: Record<string, string>) =>
  new Response(body, { headers: { "Content-Type": "application/json", ...headers } });
const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

const RUN_ERRORS = {
  400: problems`${ERRORS.malformed_json}, ${ERRORS.body_required}, ${ERRORS.validation_failed} (errors name the field, steps by index: /steps/1/config/paths), ${ERRORS.utility_failed} (the detail and errors name the failing step; when an expression passed its per-evaluation bound, the credits are used)`,
  402: problems`${ERRORS.credits_exhausted}: the account lacks a credit for every step`,
  403: problems`${ERRORS.forbidden}: the run reads or saves documents and the key lacks the documents permission`,
  404: problems`${ERRORS.document_not_found} (an input or output.saveTo)`,
  408: problems`${ERRORS.utility_timeout}: one UTILITY_TIMEOUT_MS for the whole pipeline; the credits are used`,
  412: problems`${ERRORS.precondition_failed}: output.ifMatch does not match saveTo's content ETag`,
  413: problems`${ERRORS.payload_too_large} (the request plus the stored inputs), ${ERRORS.result_too_large} (the steps would build more than UTILITY_MAX_OUTPUT_BYTES: the credits are used), ${ERRORS.document_too_large} or ${ERRORS.storage_limit_exceeded} (the saved output: every credit given back), or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
  422: problems`${ERRORS.schema_violation}: the saved output breaks its folder's schema (mode reject); nothing was saved, every credit given back`,
  429: problems`${ERRORS.account_busy}: the account already has UTILITY_QUEUE_PER_ACCOUNT runs waiting for a worker besides the UTILITY_WORKERS_PER_ACCOUNT it may run at once; other accounts are not affected; retry after Retry-After`,
  503: problems`${ERRORS.busy}: every utility worker is busy and UTILITY_QUEUE_LIMIT runs of all accounts wait; retry after Retry-After`,
};
const RUN_DESCRIPTION =
  "Steps run in order, each step's output being the next step's primary, in one worker hop (inline when the inputs are small). Every step is checked (utility and config) before anything runs or any credit is taken; one credit per step, all given back if the run or its save fails, unless a budget of the run stopped it (time limit, output limit, an expression's bound).";
const DEFINITION_ERRORS = {
  400: problems`${ERRORS.validation_failed}, naming the field (steps by index: /steps/1/utility)`,
  413: problems`${ERRORS.pipeline_too_large}: a definition over 1 MiB`,
};

export const pipelinesModule = (deps: PipelinesDeps & { auth: AuthPlugin; idempotency: IdempotencyHooks }) => {
  const accountOf = (principal: Principal | undefined) => requirePrincipal(principal).accountId;

  return new Elysia({ name: "kiln.pipelines", prefix: "/api/v1/pipelines", detail: { tags: ["Pipelines"] } })
    .use(deps.auth)
    .post(
      "/run",
      async ({ principal, body, request }) => {
        const warned = schemaWarningsHeader();
        const answer = await runPipeline(deps, {
          principal: requirePrincipal(principal),
          bytes: rawBytes(body),
          signal: request.signal,
          onReplay: (needed) => requireOnReplay(request, needed),
          onSavesNothing: () => markNoEvents(request),
          onSchemaWarnings: warned.onSchemaWarnings,
        });
        return jsonResponse(answer, warned.headers());
      },
      {
        ...deps.idempotency,
        // The output comes back as JSON text from the run (a Response, not re-validated); this types it.
        response: { 200: PipelineRunResponse },
        detail: operation({
          operationId: "runPipeline",
          summary: "Run a pipeline given in the request",
          description: RUN_DESCRIPTION,
          requestBody: { content: { "application/json": RunPipelineBody } },
          errors: RUN_ERRORS,
          schemaWarnings: 200,
          idempotent: { success: 200 },
        }),
      },
    )
    .post(
      "",
      async ({ principal, body, set }) => {
        const row = await createPipeline(deps, accountOf(principal), body);
        set.status = 201;
        set.headers.Location = `/api/v1/pipelines/${row.id}`;
        return { success: true as const, pipeline: pipelineView(row) };
      },
      {
        body: CreatePipelineBody,
        response: { 201: PipelineResponse },
        detail: operation({
          operationId: "createPipeline",
          summary: "Save a pipeline",
          description: "Every step is validated as for a run.",
          errors: DEFINITION_ERRORS,
          headers: { 201: ["Location"] },
        }),
      },
    )
    .get(
      "",
      async ({ principal, query }) => {
        const { pipelines, nextCursor } = await listPipelines(deps, accountOf(principal), {
          limit: listLimit(query.limit),
          cursor: query.cursor,
        });
        return { success: true as const, pipelines: pipelines.map(pipelineView), nextCursor };
      },
      {
        query: PipelineListQuery,
        response: { 200: PipelineListResponse },
        detail: {
          ...operation({
            operationId: "listPipelines",
            summary: "List saved pipelines",
            description: "Newest first. Pass nextCursor as cursor for the next page; null means no more.",
            errors: { 400: problems`${ERRORS.validation_failed} (limit, unknown query parameter) or ${ERRORS.invalid_cursor}` },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        success: true as const,
        pipeline: pipelineView(await getPipeline(deps, accountOf(principal), params.id)),
      }),
      {
        params: PipelineParams,
        response: { 200: PipelineResponse },
        detail: operation({
          operationId: "getPipeline",
          summary: "Get a saved pipeline",
          errors: { 404: problems`${ERRORS.pipeline_not_found} (also another account's)` },
        }),
      },
    )
    .put(
      "/:id",
      async ({ principal, params, body }) => ({
        success: true as const,
        pipeline: pipelineView(await updatePipeline(deps, accountOf(principal), params.id, body)),
      }),
      {
        params: PipelineParams,
        // 404 before the body is validated
        async transform(context) {
          const { principal, params } = context as unknown as { principal: Principal | undefined; params: { id: string } };
          await getPipeline(deps, accountOf(principal), params.id);
        },
        body: UpdatePipelineBody,
        response: { 200: PipelineResponse },
        detail: operation({
          operationId: "updatePipeline",
          summary: "Edit a saved pipeline",
          description: "Any of name, description, steps (at least one). Runs already under way keep the steps they started with.",
          errors: { ...DEFINITION_ERRORS, 404: problems`${ERRORS.pipeline_not_found} (also another account's)` },
        }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        await deletePipeline(deps, accountOf(principal), params.id);
        return { success: true as const, deleted: true as const };
      },
      {
        params: PipelineParams,
        response: { 200: PipelineDeleted },
        detail: operation({
          operationId: "deletePipeline",
          summary: "Delete a saved pipeline (permanent)",
          errors: { 404: problems`${ERRORS.pipeline_not_found} (also another account's)` },
        }),
      },
    )
    .post(
      "/:id/run",
      async ({ principal, params, body, request }) => {
        const caller = requirePrincipal(principal);
        const saved = await getPipeline(deps, caller.accountId, params.id); // 404 before the body's 413 and 400
        const warned = schemaWarningsHeader();
        const answer = await runPipeline(
          deps,
          {
            principal: caller,
            bytes: rawBytes(body),
            signal: request.signal,
            onReplay: (needed) => requireOnReplay(request, needed),
            onSavesNothing: () => markNoEvents(request),
            onSchemaWarnings: warned.onSchemaWarnings,
          },
          saved,
        );
        return jsonResponse(answer, warned.headers());
      },
      {
        ...deps.idempotency,
        params: PipelineParams,
        response: { 200: PipelineRunResponse },
        detail: operation({
          operationId: "runSavedPipeline",
          summary: "Run a saved pipeline",
          description: `The saved steps as they are when the run starts. ${RUN_DESCRIPTION}`,
          requestBody: { content: { "application/json": RunSavedPipelineBody } },
          errors: { ...RUN_ERRORS, 404: problems`${ERRORS.pipeline_not_found}, ${ERRORS.document_not_found} (an input or output.saveTo)` },
          schemaWarnings: 200,
          idempotent: { success: 200 },
        }),
      },
    );
};
