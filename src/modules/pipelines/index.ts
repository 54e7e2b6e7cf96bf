/** Pipelines (permission `utilities`): runs of several utilities in one request, and saved pipelines. */
import { Elysia, t } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { requirePrincipal, type AuthPlugin, type Principal } from "../../http/auth";
import { RawBody } from "../../http/body";
import { problemResponses } from "../../http/openapi";
import { listLimit } from "../documents/service";
import {
  CreatePipelineBody, PipelineDeleted, PipelineListQuery, PipelineListResponse, PipelineParams, PipelineResponse,
  PipelineRunResponse, RunPipelineBody, RunSavedPipelineBody, UpdatePipelineBody,
} from "./model";
import { createPipeline, deletePipeline, getPipeline, listPipelines, pipelineView, runPipeline, updatePipeline, type PipelinesDeps } from "./service";

/** The run routes, as Elysia names them: their bodies are read raw (inline inputs may go to a worker unparsed). */
export const PIPELINE_RUN_ROUTES = ["/api/v1/pipelines/run", "/api/v1/pipelines/:id/run"] as const;
/** The routes whose bodies are a pipeline definition, held to PIPELINE_DEFINITION_MAX_BYTES. */
export const PIPELINE_DEFINITION_ROUTES = ["/api/v1/pipelines", "/api/v1/pipelines/:id"] as const;
export const PIPELINE_DEFINITION_MAX_BYTES = 1024 * 1024;

const json = (schema: TSchema) => ({ content: { "application/json": { schema: schema as object } } });
const jsonResponse = (text: string) => new Response(text, { headers: { "Content-Type": "application/json" } });
const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

const AUTH = { 401: "no valid API key", 403: "the key lacks the utilities permission", 429: "rate limit exceeded" };
const RUN_PROBLEMS = problemResponses({
  ...AUTH,
  400: "malformed_json, validation_failed (errors name the field, e.g. /steps/1/config/paths), utility_failed (naming the failing step)",
  402: "credits_exhausted: one credit per step",
  403: "the key lacks utilities, or documents for a run that reads or saves documents",
  404: "document_not_found (an input or saveTo), pipeline_not_found",
  408: "utility_timeout: one UTILITY_TIMEOUT_MS for the whole pipeline",
  412: "precondition_failed: saveTo's ifMatch does not match",
  413: "payload_too_large (the request plus the stored inputs), document_too_large / storage_limit_exceeded (the saved output)",
  503: "busy: every worker is busy and the queue is full",
});
const DEFINITION_PROBLEMS = problemResponses({ ...AUTH, 400: "validation_failed, naming the field (steps by index)", 413: "pipeline_too_large: over 1 MiB" });
const ID_PROBLEMS = problemResponses({ ...AUTH, 404: "pipeline_not_found (also another account's)" });
const EDIT_PROBLEMS = problemResponses({ ...AUTH, 400: "validation_failed, naming the field (steps by index)", 404: "pipeline_not_found (also another account's)", 413: "pipeline_too_large: over 1 MiB" });
const LIST_PROBLEMS = problemResponses({ ...AUTH, 400: "validation_failed (limit), invalid_cursor" });

const RUN_STATUSES = "400 validation_failed (naming the step index) / utility_failed (naming the failing step), 402 credits_exhausted (one credit per step), 403 when the run reads or saves documents without the documents permission, 404 document_not_found, 408 utility_timeout (one UTILITY_TIMEOUT_MS for the whole pipeline), 412 precondition_failed (saveTo with ifMatch), 413 payload_too_large (the request plus the stored inputs) / document_too_large / storage_limit_exceeded (the saved output), 503 busy.";

export const pipelinesModule = (deps: PipelinesDeps & { auth: AuthPlugin }) => {
  const accountOf = (principal: Principal | undefined) => requirePrincipal(principal).accountId;

  return new Elysia({ name: "kiln.pipelines", prefix: "/api/v1/pipelines", detail: { tags: ["Pipelines"] } })
    .use(deps.auth)
    .post("/run", async ({ principal, body, request }) =>
      jsonResponse(await runPipeline(deps, { principal: requirePrincipal(principal), bytes: rawBytes(body), signal: request.signal })), {
      detail: {
        summary: "Run a pipeline given in the request",
        description: `Steps run in order, each step's output being the next step's primary, in one worker hop (inline when the inputs are small). Every step's config is checked before anything runs or any credit is taken. ${RUN_STATUSES}`,
        requestBody: { required: true, ...json(RunPipelineBody) },
        responses: { 200: { description: "The last step's output and each step's duration", ...json(PipelineRunResponse) }, ...RUN_PROBLEMS },
      },
    })
    .post("", async ({ principal, body, set }) => {
      const row = await createPipeline(deps, accountOf(principal), body);
      set.status = 201;
      set.headers.Location = `/api/v1/pipelines/${row.id}`;
      return { success: true as const, pipeline: pipelineView(row) };
    }, {
      body: CreatePipelineBody,
      detail: { summary: "Save a pipeline", description: "Every step is validated as for a run (400 naming the step index). 413 pipeline_too_large beyond 1 MiB.", responses: { 201: { description: "The saved pipeline", ...json(PipelineResponse) }, ...DEFINITION_PROBLEMS } },
    })
    .get("", async ({ principal, query }) => {
      const { pipelines, nextCursor } = await listPipelines(deps, accountOf(principal), { limit: listLimit(query.limit), cursor: query.cursor });
      return { success: true as const, pipelines: pipelines.map(pipelineView), nextCursor };
    }, {
      query: PipelineListQuery,
      detail: { summary: "List saved pipelines", description: "Newest first; limit 1–200 (default 50); pass nextCursor as cursor for the next page, null means no more.", responses: { 200: { description: "A page of pipelines", ...json(PipelineListResponse) }, ...LIST_PROBLEMS } },
    })
    .get("/:id", async ({ principal, params }) => ({ success: true as const, pipeline: pipelineView(await getPipeline(deps, accountOf(principal), params.id)) }), {
      params: PipelineParams,
      detail: { summary: "Get a saved pipeline", description: "404 pipeline_not_found.", responses: { 200: { description: "The pipeline", ...json(PipelineResponse) }, ...ID_PROBLEMS } },
    })
    .put("/:id", async ({ principal, params, body }) => ({ success: true as const, pipeline: pipelineView(await updatePipeline(deps, accountOf(principal), params.id, body)) }), {
      params: PipelineParams,
      // 404 before the body is validated
      async transform(context) {
        const { principal, params } = context as unknown as { principal: Principal | undefined; params: { id: string } };
        await getPipeline(deps, accountOf(principal), params.id);
      },
      body: UpdatePipelineBody,
      detail: { summary: "Edit a saved pipeline", description: "Any of name, description, steps (at least one). Runs already under way keep the steps they started with.", responses: { 200: { description: "The edited pipeline", ...json(PipelineResponse) }, ...EDIT_PROBLEMS } },
    })
    .delete("/:id", async ({ principal, params }) => {
      await deletePipeline(deps, accountOf(principal), params.id);
      return { success: true as const, deleted: true as const };
    }, {
      params: PipelineParams,
      detail: { summary: "Delete a saved pipeline", description: "Permanent. 404 pipeline_not_found.", responses: { 200: { description: "Deleted", ...json(PipelineDeleted) }, ...ID_PROBLEMS } },
    })
    .post("/:id/run", async ({ principal, params, body, request }) => {
      const caller = requirePrincipal(principal);
      const saved = await getPipeline(deps, caller.accountId, params.id); // 404 before the body's 413 and 400
      return jsonResponse(await runPipeline(deps, { principal: caller, bytes: rawBytes(body), signal: request.signal }, saved));
    }, {
      params: PipelineParams,
      detail: {
        summary: "Run a saved pipeline",
        description: `The saved steps as they are when the run starts. 404 pipeline_not_found. ${RUN_STATUSES}`,
        requestBody: { required: true, ...json(RunSavedPipelineBody) },
        responses: { 200: { description: "The last step's output and each step's duration", ...json(PipelineRunResponse) }, ...RUN_PROBLEMS },
      },
    });
};
