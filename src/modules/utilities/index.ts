/** Utility catalogue and execution (permission `utilities`). */

import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { RawBody } from "../../http/body";
import { markNoEvents } from "../../http/context";
import { type IdempotencyHooks, requireOnReplay } from "../../http/idempotency";
import { type OperationVariant, operation } from "../../http/openapi";
import type { UtilityRegistry } from "../../utilities/registry";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { ExecuteBody, ExecuteResponse, openApiName, runBodyOf, UtilityParams, UtilityView } from "./model";
/** The execution route as Elysia names it: its body is read raw (see app.ts's body parser). */
import { schemaWarningsHeader } from "./response-body";
import { executeUtility, getUtility, publishedSchema, type UtilityEngine, utilityView } from "./service";
export const EXECUTE_ROUTE = "/api/v1/utilities/:utilityId";

/**
 * runUtility once more per utility in the OpenAPI document, at its own path and with its config typed by
 * its schema, so that a generated client types `config` (the route is the same: /:utilityId serves it).
 */
export const utilityRunVariants = (registry: UtilityRegistry): OperationVariant[] =>
  registry.utilities.map((utility) => ({
    of: { method: "post", path: "/api/v1/utilities/{utilityId}" },
    path: `/api/v1/utilities/${utility.id}`,
    operationId: `run${openApiName(utility.id)}`,
    summary: `Run ${utility.id} (${utility.name})`,
    description: `${utility.description} The same run as runUtility, with this utility's config schema.`,
    body: runBodyOf(utility.id, publishedSchema(utility.configSchema)),
  }));

export const utilitiesModule = (deps: { engine: UtilityEngine; auth: AuthPlugin; idempotency: IdempotencyHooks }) =>
  new Elysia({ name: "kiln.utilities", prefix: "/api/v1/utilities", detail: { tags: ["Utilities"] } })
    .use(deps.auth)
    .get("", () => ({ success: true as const, utilities: deps.engine.registry.utilities.map(utilityView) }), {
      response: { 200: t.Object({ success: t.Literal(true), utilities: t.Array(UtilityView) }, { title: "UtilityList" }) },
      detail: operation({ operationId: "listUtilities", summary: "List the utilities with their config JSON Schemas (defaults included)" }),
    })
    .get(
      "/:utilityId",
      ({ params }) => ({ success: true as const, utility: utilityView(getUtility(deps.engine.registry, params.utilityId)) }),
      {
        params: UtilityParams,
        response: { 200: t.Object({ success: t.Literal(true), utility: UtilityView }, { title: "UtilityResult" }) },
        detail: operation({
          operationId: "getUtility",
          summary: "Describe one utility",
          errors: { 404: problems`${ERRORS.utility_not_found}` },
        }),
      },
    )
    .post(
      "/:utilityId",
      async ({ params, body, principal, request }) => {
        getUtility(deps.engine.registry, params.utilityId); // 404 before the body's own 413 (docs/api.md, order of checks)
        const bytes = body instanceof RawBody ? body.bytes : new Uint8Array(0);
        const warned = schemaWarningsHeader();
        const text = await executeUtility(deps.engine, {
          principal: requirePrincipal(principal),
          utilityId: params.utilityId,
          bytes,
          signal: request.signal,
          onReplay: (needed) => requireOnReplay(request, needed),
          onSavesNothing: () => markNoEvents(request),
          onSchemaWarnings: warned.onSchemaWarnings,
        });
        return new Response(text, { headers: { "Content-Type": "application/json", ...warned.headers() } });
      },
      {
        ...deps.idempotency,
        params: UtilityParams,
        // The output comes back as JSON text from the run (a Response, not re-validated); this types it.
        response: { 200: ExecuteResponse },
        detail: operation({
          operationId: "runUtility",
          summary: "Run a utility on JSON inputs",
          description:
            "Inputs up to UTILITY_INLINE_MAX_BYTES run inline, larger ones in a worker thread. Stored documents may be the inputs (inputs.primaryDocumentId, inputs.secondaryDocumentId) and the output may be saved (output.saveAs, output.saveTo); both need the documents permission too. A successful run uses one credit.",
          requestBody: { content: { "application/json": ExecuteBody } },
          errors: {
            400: problems`${ERRORS.validation_failed} (the body or the utility's config), ${ERRORS.malformed_json}, ${ERRORS.body_required} or ${ERRORS.utility_failed} (the utility could not process the input; when an expression passed its per-evaluation bound, the run's credit is used)`,
            402: problems`${ERRORS.credits_exhausted}: the account's monthly credits are used up`,
            403: problems`${ERRORS.forbidden}: the run reads or saves documents and the key lacks the documents permission`,
            404: problems`${ERRORS.utility_not_found}, ${ERRORS.document_not_found} (an input or output.saveTo)`,
            408: problems`${ERRORS.utility_timeout}: the run was stopped; its credit is used`,
            412: problems`${ERRORS.precondition_failed}: output.ifMatch does not match saveTo's content ETag`,
            413: problems`${ERRORS.payload_too_large}: the request plus the stored inputs are over UTILITY_MAX_PAYLOAD_BYTES; ${ERRORS.result_too_large}: the run would build more than UTILITY_MAX_OUTPUT_BYTES (its credit is used), or was stopped at UTILITY_MEMORY_LIMIT_BYTES (no credit used); ${ERRORS.document_too_large} or ${ERRORS.storage_limit_exceeded}: the saved output does not fit (the credit is given back), or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
            422: problems`${ERRORS.schema_violation}: the saved output breaks its folder's schema (mode reject); nothing was saved and the credit is given back`,
            429: problems`${ERRORS.account_busy}: the account already has UTILITY_QUEUE_PER_ACCOUNT runs waiting for a worker besides the UTILITY_WORKERS_PER_ACCOUNT it may run at once; other accounts are not affected; retry after Retry-After`,
            503: problems`${ERRORS.busy}: every utility worker is busy and UTILITY_QUEUE_LIMIT runs of all accounts wait; retry after Retry-After`,
          },
          schemaWarnings: 200,
          idempotent: { success: 200 },
        }),
      },
    );
