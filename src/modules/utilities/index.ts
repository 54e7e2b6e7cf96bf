/** Utility catalogue and execution (permission `utilities`). */
import { Elysia, t } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { requirePrincipal, type AuthPlugin } from "../../http/auth";
import type { IdempotencyPlugin } from "../../http/idempotency";
import { RawBody } from "../../http/body";
import { ExecuteBody, ExecuteResponse, UtilityParams, UtilityView } from "./model";
import { executeUtility, getUtility, utilityView, type UtilityEngine } from "./service";

/** The execution route as Elysia names it: its body is read raw (see app.ts's body parser). */
export const EXECUTE_ROUTE = "/api/v1/utilities/:utilityId";

/** A `t` schema as an OpenAPI media type (TypeBox schemas are JSON Schema). */
const json = (schema: TSchema) => ({ content: { "application/json": { schema: schema as object } } });

export const utilitiesModule = (deps: { engine: UtilityEngine; auth: AuthPlugin; idempotency: IdempotencyPlugin }) =>
  new Elysia({ name: "kiln.utilities", prefix: "/api/v1/utilities", detail: { tags: ["Utilities"] } })
    .use(deps.auth)
    .use(deps.idempotency)
    .get("", () => ({ success: true as const, utilities: deps.engine.registry.utilities.map(utilityView) }), {
      response: { 200: t.Object({ success: t.Literal(true), utilities: t.Array(UtilityView) }) },
      detail: { summary: "List the utilities with their config JSON Schemas (defaults included)" },
    })
    .get("/:utilityId", ({ params }) => ({ success: true as const, utility: utilityView(getUtility(deps.engine.registry, params.utilityId)) }), {
      params: UtilityParams,
      response: { 200: t.Object({ success: t.Literal(true), utility: UtilityView }) },
      detail: { summary: "Describe one utility" },
    })
    .post("/:utilityId", async ({ params, body, principal, request }) => {
      getUtility(deps.engine.registry, params.utilityId); // 404 before the body's own 413 (decisions.md §2)
      const bytes = body instanceof RawBody ? body.bytes : new Uint8Array(0);
      const text = await executeUtility(deps.engine, {
        accountId: requirePrincipal(principal).accountId,
        utilityId: params.utilityId,
        bytes,
        signal: request.signal,
      });
      return new Response(text, { headers: { "Content-Type": "application/json" } });
    }, {
      idempotent: true,
      params: UtilityParams,
      detail: {
        summary: "Run a utility on JSON inputs",
        description: "Payloads up to UTILITY_INLINE_MAX_BYTES run inline, larger ones in a worker thread. 402 credits_exhausted, 408 utility_timeout, 413 payload_too_large, 503 busy (with Retry-After).",
        requestBody: { required: true, ...json(ExecuteBody) },
      },
      // Declared for the OpenAPI document: the handler answers with the JSON text itself (a Response, not validated again).
      response: { 200: ExecuteResponse },
    });
