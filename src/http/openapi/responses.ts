/** The pieces of an OpenAPI document every route shares: the Problem schema, the response headers and the problem responses. */

import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ERRORS, type Problems, problems } from "../../core/error-codes";

export type Json = Record<string, unknown>;

export const Problem = t.Object(
  {
    success: t.Literal(false),
    error: t.String({ description: "the same text as detail (kept for clients of the first API version)" }),
    code: t.String({ description: "stable machine-readable reason, e.g. document_not_found" }),
    type: t.String({ description: "always about:blank" }),
    title: t.String({ description: "the HTTP status text" }),
    status: Type.Integer(),
    detail: t.String({ description: "what went wrong, for a human" }),
    requestId: t.String({ description: "the X-Request-Id of this request, also in the log line" }),
    schema: t.Optional(
      t.Object(
        { id: t.String({ description: "sch_…" }), version: Type.Integer() },
        { description: "schema_violation: the schema (and its version) the content was checked against" },
      ),
    ),
    errors: t.Optional(
      t.Array(
        t.Object({
          path: t.String({ description: 'JSON pointer to the field, "" for the whole body (schema_violation: into the content)' }),
          message: t.String(),
          keyword: t.Optional(t.String({ description: "schema_violation: the schema keyword that failed" })),
          schemaPath: t.Optional(t.String({ description: "schema_violation: JSON pointer into the schema (its evaluation path)" })),
        }),
        {
          description:
            "one entry per invalid field (validation_failed, schema_invalid, query_invalid) or per schema error (schema_violation, at most 100)",
        },
      ),
    ),
    suggestedIndex: t.Optional(
      t.Object(
        { folder: t.String(), fields: t.Array(t.Object({ path: t.String(), order: t.Optional(t.String()) })) },
        { description: "query_needs_index: the index that would serve the query, to POST to /api/v1/indexes as it is" },
      ),
    ),
    index: t.Optional(t.String({ description: "index_building, index_unique_conflict, index_value_refused: the index (idx_…)" })),
    document: t.Optional(t.String({ description: "index_unique_conflict: the document that holds the key" })),
    progress: t.Optional(
      t.Object({ processed: Type.Integer(), total: Type.Integer() }, { description: "index_building: how far the build is" }),
    ),
  },
  { title: "Problem", description: "An RFC 9457 problem details object (Content-Type application/problem+json)" },
);

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });
const stringHeader = (description: string) => ({ description, schema: { type: "string" } });

/** Response headers, declared once as components and referenced by name. */
export const HEADERS = {
  ETag: stringHeader('Strong entity tag: "v<revision>" for metadata, "<sha256>" for content (of a version too)'),
  Location: stringHeader("URL path of the created resource"),
  "Content-Disposition": stringHeader('attachment; filename="<document name>.json"'),
  "WWW-Authenticate": stringHeader("Bearer"),
  "Retry-After": integerHeader("seconds to wait before retrying"),
  "RateLimit-Limit": integerHeader("requests allowed per minute for the account"),
  "RateLimit-Remaining": integerHeader("requests left in the current window"),
  "RateLimit-Reset": integerHeader("seconds until the window is full again"),
  "X-RateLimit-Limit": integerHeader("same as RateLimit-Limit"),
  "X-RateLimit-Remaining": integerHeader("same as RateLimit-Remaining"),
  "X-RateLimit-Reset": integerHeader("epoch seconds when the window is full again"),
  "X-Request-Id": stringHeader("the caller's X-Request-Id when it is a sane token, else a fresh one"),
  // Declared here for the routes that answer them (idempotent retries, range downloads).
  "Idempotent-Replayed": stringHeader("true when this is the stored answer to an earlier request with the same Idempotency-Key"),
  "Accept-Ranges": stringHeader("bytes"),
  "Kiln-Schema-Warnings": integerHeader("how many errors the folder's schema (mode warn) found in what was stored; absent when none"),
  "Content-Range": stringHeader("the byte range sent, e.g. bytes 0-99/1234 (or bytes */1234 with 416)"),
} as const;

export type HeaderName = keyof typeof HEADERS;
export const RATE_LIMIT_HEADERS: HeaderName[] = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
];

/** The shared statuses, one code each, added to a route by what it has (buildOpenApiDocument decides). */
export const SHARED = {
  validationFailed: problems`${ERRORS.validation_failed}: errors[] names each invalid field or parameter`,
  malformedJson: problems`${ERRORS.malformed_json}: the body is not JSON`,
  bodyRequired: problems`${ERRORS.body_required}: the body is empty`,
  bodyTooLarge: problems`${ERRORS.document_too_large}: the request body is larger than the route accepts`,
  unsupportedMediaType: problems`${ERRORS.unsupported_media_type}: a Content-Encoding or Content-Type Kiln does not take`,
  tokenInQuery: problems`${ERRORS.token_in_query}: a key or token in the query string; send it in the Authorization header`,
  unauthorized: problems`${ERRORS.unauthorized}: no key, not the Bearer scheme, or a key that is unknown, revoked or expired`,
  forbidden: problems`${ERRORS.forbidden}: the key lacks the permission of this API area`,
  rateLimited: problems`${ERRORS.rate_limited}: the account's requests per minute are used up`,
  tooManyFailures: problems`${ERRORS.too_many_failed_authentications}: too many unknown, revoked or expired keys from this client (a valid key is still served)`,
  databaseUnavailable: problems`${ERRORS.database_unavailable}: the database cannot be reached right now; retry after Retry-After`,
  databaseBusy: problems`${ERRORS.database_busy}: the database rolled the request back in a conflict with another (a deadlock or a serialization failure); nothing was written; retry after Retry-After`,
  internalError: problems`${ERRORS.internal_error}: logged with the request id`,
} as const;

const PROBLEM = { $ref: "#/components/schemas/Problem" };

/** A Problem whose `code` is one of `codes`. */
const problemSchema = (codes: string[]): Json =>
  codes.length === 0
    ? PROBLEM
    : { allOf: [PROBLEM, { type: "object", properties: { code: { type: "string", enum: codes } }, required: ["code"] }] };

export const problemResponse = (problem: Problems, headers: HeaderName[] = [], optionalHeaders: HeaderName[] = []): Json => ({
  description: problem.description,
  ...(headers.length || optionalHeaders.length ? { headers: { ...headerRefs(headers, headers), ...headerRefs(optionalHeaders) } } : {}),
  content: { "application/problem+json": { schema: problemSchema([...problem.codes]) } },
});

/** The codes a problem response lists. */
export function problemCodes(response: Json): string[] {
  const schema = ((response.content as Json | undefined)?.["application/problem+json"] as Json | undefined)?.schema as Json | undefined;
  const narrowed = (schema?.allOf as Json[] | undefined)?.[1] as { properties?: { code?: { enum?: string[] } } } | undefined;
  return narrowed?.properties?.code?.enum ?? [];
}

/**
 * Adds a problem to `responses`: a new status, or the codes of `problem` that the status does not list
 * yet (its description then gains that sentence, its headers these ones).
 */
export function addProblem(responses: Record<string, Json>, status: number, problem: Problems, headers: HeaderName[] = []): void {
  const existing = responses[status];
  if (!existing) {
    responses[status] = problemResponse(problem, headers);
    return;
  }
  const listed = problemCodes(existing);
  const added = problem.codes.filter((code) => !listed.includes(code));
  if (added.length === 0) return;
  responses[status] = {
    ...existing,
    description: `${existing.description}; ${problem.description}`,
    headers: { ...(existing.headers as Json), ...headerRefs(headers, headers) },
    content: { "application/problem+json": { schema: problemSchema([...listed, ...added]) } },
  };
}

export function headerRefs(names: HeaderName[], required: HeaderName[] = []): Json {
  return Object.fromEntries(
    names.map((name) => [name, required.includes(name) ? { ...HEADERS[name], required: true } : { $ref: `#/components/headers/${name}` }]),
  );
}
