/**
 * GET /openapi.json, generated from the routes themselves, GET /docs, a browsable reference whose
 * viewer (Scalar's standalone bundle) is served by Kiln from node_modules, so it works offline, and GET /,
 * which points to both.
 *
 * The document is built here rather than by @elysiajs/openapi because the app-wide raw body parser
 * hides route body schemas from that plugin and it declares no error responses. One central pass adds
 * what every route shares, decided by the route's path (security, permission) and its schemas:
 *   - public paths get `security: []`; API paths 401 (WWW-Authenticate), 429 (Retry-After and the
 *     RateLimit headers) and 503 database_unavailable, and 403 when their area needs a permission; a
 *     route with a bearer scheme 400 token_in_query;
 *   - any parameter or body 400, a body 413 and 415, every route 500;
 *   - a schema with a `title` becomes a named component (`#/components/schemas/<title>`), and an optional
 *     property of a component keeps its default in words only (see withoutOptionalDefaults).
 * A route declares only what is its own, through operation() in its `detail`: operationId, its specific
 * problem statuses with the codes they carry, response headers, If-Match / If-None-Match, Range, 304, and
 * a raw request body with its media type.
 *
 * Every problem response lists the codes it can carry as an `enum` of `code` (the catalogue entries its
 * description is written around, src/core/error-codes.ts; the shared statuses add theirs), so a generated
 * client can switch on them.
 */
import { Elysia, t, type AnyElysia } from "elysia";
import { Type, type TSchema } from "@sinclair/typebox";
import { resolve } from "node:path";
import { ERRORS, problems, type Problems } from "../core/error-codes";
import { requiredPermission } from "./permissions";
import { staticAsset } from "./static-asset";

type Json = Record<string, unknown>;

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
    errors: t.Optional(
      t.Array(
        t.Object({
          path: t.String({ description: 'JSON pointer to the field, "" for the whole body' }),
          message: t.String(),
        }),
        { description: "one entry per invalid field (validation_failed)" },
      ),
    ),
  },
  { title: "Problem", description: "An RFC 9457 problem details object (Content-Type application/problem+json)" },
);

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });
const stringHeader = (description: string) => ({ description, schema: { type: "string" } });

/** Response headers, declared once as components and referenced by name. */
const HEADERS = {
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
  "Content-Range": stringHeader("the byte range sent, e.g. bytes 0-99/1234 (or bytes */1234 with 416)"),
} as const;

export type HeaderName = keyof typeof HEADERS;
const RATE_LIMIT_HEADERS: HeaderName[] = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
];

/** The shared statuses, one code each, added to a route by what it has (buildOpenApiDocument decides). */
const SHARED = {
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

const problemResponse = (problem: Problems, headers: HeaderName[] = [], optionalHeaders: HeaderName[] = []): Json => ({
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
function addProblem(responses: Record<string, Json>, status: number, problem: Problems, headers: HeaderName[] = []): void {
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

function headerRefs(names: HeaderName[], required: HeaderName[] = []): Json {
  return Object.fromEntries(
    names.map((name) => [name, required.includes(name) ? { ...HEADERS[name], required: true } : { $ref: `#/components/headers/${name}` }]),
  );
}

export interface OperationOptions {
  /** readable and unique, e.g. createDocument */
  operationId: string;
  summary: string;
  description?: string;
  /**
   * route-specific problem statuses: the codes each carries (their `enum`) and why, as prose around
   * catalogue entries: problems`${ERRORS.document_not_found} (also another account's)`
   */
  errors?: Record<number, Problems>;
  /** headers every response of this status carries */
  headers?: Record<number, HeaderName[]>;
  /** the route takes an Idempotency-Key (http/idempotency.ts): the header, 409, 422, and Idempotent-Replayed on this success status */
  idempotent?: { success: number };
  /** conditional request headers the route honours */
  conditional?: ("If-Match" | "If-None-Match")[];
  /** a download that answers a Range with 206 (Content-Range) or 416, and honours If-Range */
  ranges?: boolean;
  /** the route answers 304 Not Modified (no body) to If-None-Match */
  notModified?: boolean;
  /** a body the handler reads raw, by media type (the route's `body` schema is used otherwise) */
  requestBody?: { description?: string; content: Record<string, MediaSchema> };
  /** success responses the handler builds itself (its Response bypasses `response` schemas) */
  responses?: Record<number, { description: string; content: Record<string, MediaSchema> }>;
}

/**
 * An NDJSON body (application/x-ndjson) of `line` values. The body as a whole is text, which is how a
 * generated client sends and reads it (a string or a stream); each line's schema is the named component
 * the description points to, and `x-itemSchema` (OpenAPI 3.2's `itemSchema`, which the 3.1 schema does
 * not allow on a media type) gives it to tools that read it.
 */
export class NdjsonLines {
  constructor(
    readonly line: TSchema,
    readonly what: string,
  ) {}
}

type MediaSchema = TSchema | Json | NdjsonLines;

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1 to 255 printable ASCII characters (else 400 invalid_idempotency_key). A retry with the same key and body within 24 hours gets the first answer again, with Idempotent-Replayed: true, and nothing is done twice.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
};

const CONDITIONAL = {
  "If-Match": "ETag the resource must still have; otherwise 412 precondition_failed and nothing changes",
  "If-None-Match": "ETags the client already has; a match answers 304 without a body",
};

const RANGE_PARAMETERS = [
  {
    name: "Range",
    in: "header",
    required: false,
    description:
      "One byte range of the stored content: bytes=<first>-<last>, bytes=<first>- or bytes=-<length of the end>. Answered 206 with those bytes and Content-Range, or 416 range_not_satisfiable when it starts past the end; several ranges, another unit or a malformed header get the whole content (200).",
    schema: { type: "string", examples: ["bytes=0-1023"] },
  },
  {
    name: "If-Range",
    in: "header",
    required: false,
    description:
      "The content ETag the client already holds part of: the Range applies only while the content still has this ETag, otherwise the whole content comes (200). A date or a weak tag never matches.",
    schema: { type: "string" },
  },
];

/** The 206 and 416 of a range download (RFC 9110 §14, §15.3.7, §15.5.17). */
function rangeResponses(success: Json | undefined): Json {
  return {
    206: {
      description: "Partial Content: the bytes the Range asked for, exactly as stored (a slice of JSON text, not JSON on its own)",
      headers: {
        ...headerRefs(["Content-Range"], ["Content-Range"]),
        ...(success?.headers as Json),
        ...headerRefs(["Accept-Ranges"]),
      },
      content: { "application/json": { schema: { type: "string", description: "the requested bytes of the stored JSON text" } } },
    },
    416: problemResponse(
      problems`${ERRORS.range_not_satisfiable}: the Range starts past the end of the content; Content-Range (bytes */<size>) gives its size`,
      ["Content-Range"],
      ["Accept-Ranges"],
    ),
  };
}

/** A route's `detail`: standard OpenAPI operation fields, merged by the generator with what it derives. */
export function operation(options: OperationOptions) {
  const responses: Json = {};
  for (const [status, problem] of Object.entries(options.errors ?? {})) {
    responses[status] = problemResponse(problem, Number(status) === 503 ? ["Retry-After"] : []);
  }
  for (const [status, response] of Object.entries(options.responses ?? {})) {
    responses[status] = { description: response.description, content: mediaTypes(response.content) };
  }
  if (options.notModified) responses[304] = { description: "Not Modified: the If-None-Match tag matches; no body" };
  for (const [status, names] of Object.entries(options.headers ?? {})) {
    const response = (responses[status] ??= {}) as Json;
    response.headers = { ...(response.headers as Json), ...headerRefs(names, names) };
  }
  if (options.idempotent) {
    const answers = responses as Record<string, Json>;
    addProblem(answers, 400, problems`${ERRORS.invalid_idempotency_key}: the Idempotency-Key is not 1 to 255 printable ASCII characters`);
    addProblem(answers, 409, problems`${ERRORS.idempotency_in_progress}: a request with this Idempotency-Key is still running`, [
      "Retry-After",
    ]);
    addProblem(
      answers,
      409,
      problems`${ERRORS.idempotency_answer_not_kept}: the first request with this Idempotency-Key was carried out, but its answer was too large to keep`,
    );
    addProblem(
      answers,
      422,
      problems`${ERRORS.idempotency_key_reused}: this Idempotency-Key was used with another request (method, path or body)`,
    );
    const success = (responses[options.idempotent.success] ??= {}) as Json;
    success.headers = { ...(success.headers as Json), ...headerRefs(["Idempotent-Replayed"]) };
  }
  if (options.ranges) {
    const success = (responses[200] ??= {}) as Json;
    success.headers = { ...(success.headers as Json), ...headerRefs(["Accept-Ranges"]) };
    Object.assign(responses, rangeResponses(success));
  }
  if (options.notModified) (responses[304] as Json).headers = headerRefs(["ETag"], ["ETag"]);
  const parameters = [
    ...(options.conditional ?? []).map((name) => ({
      name,
      in: "header",
      required: false,
      description: CONDITIONAL[name],
      schema: { type: "string" },
    })),
    ...(options.ranges ? RANGE_PARAMETERS : []),
    ...(options.idempotent ? [IDEMPOTENCY_KEY] : []),
  ];
  return {
    operationId: options.operationId,
    summary: options.summary,
    ...(options.description ? { description: options.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(options.requestBody
      ? { requestBody: { required: true, description: options.requestBody.description, content: mediaTypes(options.requestBody.content) } }
      : {}),
    responses,
  } as Record<string, unknown>;
}

const mediaTypes = (content: Record<string, MediaSchema>) =>
  Object.fromEntries(
    Object.entries(content).map(([type, schema]) => [
      type,
      schema instanceof NdjsonLines
        ? {
            schema: {
              type: "string",
              description: `NDJSON: ${schema.what}, one JSON value per line, each line ended by a line feed. Each line is one ${schema.line.title} (#/components/schemas/${schema.line.title}).`,
            },
            "x-itemSchema": schema.line,
          }
        : { schema },
    ]),
  );

/** JSON Schema keywords TypeBox and Elysia accept that OpenAPI 3.1 (and strict validators) do not. */
const NON_STANDARD = new Set(["error", "errorMessage"]);

/** A plain JSON copy of a TypeBox schema: symbols and non-standard keywords dropped, titled schemas named. */
function cleanSchema(schema: unknown, named: Map<string, { json: string; schema: unknown }>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => cleanSchema(item, named));
  if (schema === null || typeof schema !== "object") return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (NON_STANDARD.has(key) && typeof value !== "object") continue;
    copy[key] =
      key === "properties"
        ? Object.fromEntries(Object.entries(value as Json).map(([name, member]) => [name, cleanSchema(member, named)]))
        : key === "const" || key === "default" || key === "examples" || key === "enum"
          ? value
          : cleanSchema(value, named);
  }
  const title = typeof copy.title === "string" && (copy.type !== undefined || Array.isArray(copy.anyOf)) ? copy.title : undefined;
  if (!title) return copy;
  const component = withoutOptionalDefaults(copy);
  const json = JSON.stringify(component);
  const existing = named.get(title);
  if (existing && existing.json !== json) throw new Error(`OpenAPI: two different schemas are titled ${title}`);
  named.set(title, { json, schema: component });
  return { $ref: `#/components/schemas/${title}` };
}

/**
 * A component schema whose optional properties carry their `default` in their description instead.
 * Generators read a component's default as "always present" (openapi-typescript's defaultNonNullable
 * makes such a property required), which holds for an answer but not for a request: `output.return`
 * would have to be sent with every saveAs. Inline request bodies and parameters keep their defaults.
 */
function withoutOptionalDefaults(schema: Json): Json {
  const copy: Json = { ...schema };
  if (copy.properties) {
    const required = (copy.required as string[] | undefined) ?? [];
    copy.properties = Object.fromEntries(
      Object.entries(copy.properties as Record<string, Json>).map(([name, member]) => {
        let property = withoutOptionalDefaults(member);
        if (!required.includes(name) && "default" in property) {
          const { default: value, ...rest } = property;
          const said = `default: ${JSON.stringify(value)}`;
          property = { ...rest, description: typeof rest.description === "string" ? `${rest.description} (${said})` : said };
        }
        return [name, property];
      }),
    );
  }
  for (const key of ["items", "additionalProperties"]) {
    if (copy[key] && typeof copy[key] === "object") copy[key] = withoutOptionalDefaults(copy[key] as Json);
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(copy[key])) copy[key] = (copy[key] as Json[]).map(withoutOptionalDefaults);
  }
  return copy;
}

interface RouteLike {
  method: string;
  path: string;
  hooks?: { body?: unknown; query?: unknown; params?: unknown; response?: unknown; detail?: Json };
}

const openapiPath = (path: string) => path.replace(/:([^/]+)/g, "{$1}");

function parametersOf(schema: unknown, location: "path" | "query", named: Map<string, { json: string; schema: unknown }>): Json[] {
  const object = cleanSchema(schema, named) as { properties?: Json; required?: string[] } | undefined;
  return Object.entries(object?.properties ?? {}).map(([name, member]) => ({
    name,
    in: location,
    required: location === "path" || (object?.required ?? []).includes(name),
    schema: member,
  }));
}

function mergeResponse(into: Json | undefined, from: Json): Json {
  if (!into) return from;
  return {
    ...into,
    ...from,
    ...(into.headers || from.headers ? { headers: { ...(into.headers as Json), ...(from.headers as Json) } } : {}),
    ...(into.content || from.content ? { content: { ...(into.content as Json), ...(from.content as Json) } } : {}),
  };
}

/** Whether a parameter can be refused (400): a query parameter or a path parameter narrower than any string. */
const isConstrained = (parameter: Json) =>
  parameter.in === "query" ||
  (parameter.in === "path" && Object.keys(parameter.schema as Json).some((keyword) => keyword !== "type" && keyword !== "description"));

const SUCCESS_DESCRIPTIONS: Record<number, string> = { 200: "OK", 201: "Created", 204: "No Content" };

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  serverUrl?: string;
  /**
   * The top-level `webhooks` object (OpenAPI 3.1): what Kiln POSTs to a receiver, by name. Its schemas
   * go through the same cleaning as the routes', so a titled one (the Event) becomes a component.
   */
  webhooks?: Record<string, Json>;
  /** operations documented as copies of a route's, each at a path of its own with its own body */
  variants?: readonly OperationVariant[];
}

/**
 * A documented copy of a route's operation (`of`) at a concrete path that the route serves (a value of
 * its path parameter written out), with its own request body: a generated client then types that body
 * per path. Its responses, headers and security are the route's.
 */
export interface OperationVariant {
  of: { method: string; path: string };
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  body: TSchema;
}

/** The OpenAPI 3.1 document of every route of `app` that is not hidden. */
export function buildOpenApiDocument(routes: readonly RouteLike[], info: DocumentInfo): Json {
  const named = new Map<string, { json: string; schema: unknown }>();
  cleanSchema(Problem, named);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const hooks = route.hooks ?? {};
    const detail = { ...(hooks.detail ?? {}) } as Json;
    const method = route.method.toLowerCase();
    if (detail.hide || method === "options" || route.method === "ALL") continue;
    delete detail.hide;
    const permission = requiredPermission(route.path);
    const secured = permission !== undefined;
    const parameters = [
      ...parametersOf(
        hooks.params ?? {
          properties: Object.fromEntries([...route.path.matchAll(/:([^/]+)/g)].map((match) => [match[1], { type: "string" }])),
        },
        "path",
        named,
      ),
      ...(hooks.query ? parametersOf(hooks.query, "query", named) : []),
    ];
    // A route's own parameter (e.g. a more exact schema for a query value) replaces the derived one.
    const own = (detail.parameters as Json[] | undefined) ?? [];
    const merged = [...parameters.filter((derived) => !own.some((mine) => mine.name === derived.name && mine.in === derived.in)), ...own];
    const requestBody = detail.requestBody
      ? (cleanSchema(detail.requestBody, named) as Json)
      : hooks.body
        ? { required: true, content: { "application/json": { schema: cleanSchema(hooks.body, named) } } }
        : undefined;

    const responses: Record<string, Json> = {};
    if (hooks.response && typeof hooks.response === "object") {
      for (const [status, schema] of Object.entries(hooks.response as Json)) {
        const description = SUCCESS_DESCRIPTIONS[Number(status)] ?? "Response";
        // t.Void() (a 304) is a response without a body.
        responses[status] =
          (schema as { type?: string }).type === "void"
            ? { description }
            : { description, content: { "application/json": { schema: cleanSchema(schema, named) } } };
      }
    }
    for (const [status, response] of Object.entries((detail.responses as Json | undefined) ?? {})) {
      responses[status] = mergeResponse(responses[status], cleanSchema(response, named) as Json);
    }
    const security = (detail.security as Json[] | undefined) ?? (secured ? [{ bearerAuth: [] }] : []);
    if (merged.some(isConstrained) || requestBody) addProblem(responses, 400, SHARED.validationFailed);
    if (requestBody) {
      addProblem(responses, 400, SHARED.malformedJson);
      addProblem(responses, 400, SHARED.bodyRequired);
      // a route with its own body limit (utility runs, pipeline definitions) declares its own 413
      responses[413] ??= problemResponse(SHARED.bodyTooLarge);
      addProblem(responses, 415, SHARED.unsupportedMediaType);
    }
    if (security.length > 0) addProblem(responses, 400, SHARED.tokenInQuery);
    if (secured) {
      addProblem(responses, 401, SHARED.unauthorized, ["WWW-Authenticate"]);
      addProblem(responses, 429, SHARED.rateLimited, ["Retry-After"]);
      addProblem(responses, 429, SHARED.tooManyFailures, ["Retry-After"]);
      addProblem(responses, 503, SHARED.databaseUnavailable, ["Retry-After"]);
      addProblem(responses, 503, SHARED.databaseBusy, ["Retry-After"]);
    }
    if (permission) addProblem(responses, 403, SHARED.forbidden);
    addProblem(responses, 500, SHARED.internalError);
    for (const [status, response] of Object.entries(responses)) {
      const headers: Json = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
      if (secured) Object.assign(headers, headerRefs(RATE_LIMIT_HEADERS, status === "429" ? RATE_LIMIT_HEADERS : []));
      response.headers = { ...headers, ...(response.headers as Json) };
    }
    const tags = detail.tags;
    delete detail.tags;
    (paths[openapiPath(route.path)] ??= {})[method] = {
      ...(tags ? { tags } : {}),
      ...detail,
      ...(merged.length ? { parameters: merged } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
      // a route with its own scheme (GET /metrics and its METRICS_TOKEN) names it in its detail
      security,
    };
  }
  for (const variant of info.variants ?? []) {
    const template = paths[variant.of.path]?.[variant.of.method] as Json | undefined;
    if (!template) throw new Error(`OpenAPI: no ${variant.of.method} ${variant.of.path} to copy for ${variant.operationId}`);
    const parameters = ((template.parameters as Json[] | undefined) ?? []).filter(
      (parameter) => parameter.in !== "path" || variant.path.includes(`{${parameter.name}}`),
    );
    const { parameters: _template, ...rest } = template;
    (paths[variant.path] ??= {})[variant.of.method] = {
      ...rest,
      operationId: variant.operationId,
      summary: variant.summary,
      ...(variant.description ? { description: variant.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      requestBody: { required: true, content: { "application/json": { schema: cleanSchema(variant.body, named) } } },
    };
  }
  const webhooks = info.webhooks
    ? Object.fromEntries(Object.entries(info.webhooks).map(([name, item]) => [name, cleanSchema(item, named) as Json]))
    : undefined;
  return {
    openapi: "3.1.1",
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl ?? "/", description: "this server" }],
    tags: [
      { name: "Documents", description: "Store, list, download and update JSON documents" },
      { name: "Utilities", description: "Run JSON transformations" },
      { name: "Usage", description: "The caller's storage and credits" },
      { name: "Admin", description: "Accounts and API keys (permission admin)" },
      { name: "Operations", description: "Health, readiness and this reference" },
    ],
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      schemas: Object.fromEntries([...named].sort(([a], [b]) => a.localeCompare(b)).map(([name, { schema }]) => [name, schema])),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer kiln_… (the scheme name is case-insensitive)" },
        metricsToken: { type: "http", scheme: "bearer", description: "GET /metrics only: Authorization: Bearer <METRICS_TOKEN>" },
      },
    },
  };
}

const VIEWER = resolve(import.meta.dir, "../../node_modules/@scalar/api-reference/dist/browser/standalone.js");
/** 4.35 MB of JavaScript: sent br- or gzip-compressed (about 1 MB), each form made once and kept in memory. */
const viewerScript = staticAsset(VIEWER, { contentType: "text/javascript; charset=utf-8", cacheControl: "public, max-age=86400" });

/** An icon in the page itself: without one the browser asks for /favicon.ico, a 404 in the log. */
const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#b4532a"/><path d="M4 3h2v4l4-4h3L8 8l5 5h-3L6 9v4H4z" fill="#fff"/></svg>',
)}`;

/**
 * The reference page. `authentication` preselects the bearer scheme in the request panel (Scalar shows
 * "No authentication selected" otherwise, since the document sets security per operation only).
 */
const docsPage = (title: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="${ICON}">
  <title>${title}</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/standalone.js"></script>
  <script>
    Scalar.createApiReference("#app", { url: "/openapi.json", withDefaultFonts: false, hideClientButton: true, telemetry: false, showToolbar: "never", showDeveloperTools: "never", mcp: { disabled: true }, agent: { disabled: true }, authentication: { preferredSecurityScheme: "bearerAuth" } });
  </script>
</body>
</html>
`;

/**
 * GET /: where to go from here, as a small JSON object of links (as API roots such as GitHub's answer),
 * not a redirect: `curl localhost:3000` then shows the way instead of an empty 302, and a browser
 * shows the links.
 */
const ROOT = {
  success: true as const,
  name: "Kiln",
  description: "JSON document storage and transformation API",
  links: { docs: "/docs", openapi: "/openapi.json", health: "/health", ready: "/ready", api: "/api/v1" },
};
const RootResponse = t.Object(
  {
    success: t.Literal(true),
    name: t.String(),
    description: t.String(),
    links: t.Object(
      {
        docs: t.String({ description: "the browsable API reference" }),
        openapi: t.String({ description: "the OpenAPI 3.1 document" }),
        health: t.String({ description: "whether the process serves" }),
        ready: t.String({ description: "whether the node is ready for traffic" }),
        api: t.String({ description: "the base path of the API (every route under it needs a key)" }),
      },
      { description: "paths on this server" },
    ),
  },
  { title: "ServiceIndex" },
);

const INFO: DocumentInfo = {
  title: "Kiln",
  version: "1.0.0",
  description: "JSON document storage and transformation API. Errors are application/problem+json (RFC 9457) with a stable `code`.",
};

/**
 * The reference routes. describe(app) names the app whose routes the document lists; it is read on each
 * request (cached while the route count stays the same), so routes added after this plugin are covered.
 */
export function openapiDocs(options: Pick<DocumentInfo, "webhooks" | "variants"> = {}) {
  const info: DocumentInfo = { ...INFO, ...options };
  let routesOf: () => readonly RouteLike[] = () => [];
  let cached: { count: number; text: string } | undefined;
  const plugin = new Elysia({ name: "kiln.openapi", detail: { tags: ["Operations"] } })
    .get("/", () => ROOT, {
      response: { 200: RootResponse },
      detail: operation({ operationId: "getServiceIndex", summary: "Links to the reference, the OpenAPI document and the health checks" }),
    })
    .get(
      "/openapi.json",
      () => {
        const routes = routesOf();
        if (cached?.count !== routes.length) cached = { count: routes.length, text: JSON.stringify(buildOpenApiDocument(routes, info)) };
        return new Response(cached.text, { headers: { "Content-Type": "application/json" } });
      },
      {
        detail: operation({
          operationId: "getOpenApiDocument",
          summary: "This OpenAPI 3.1 document",
          responses: { 200: { description: "The document", content: { "application/json": { type: "object" } } } },
        }),
      },
    )
    .get("/docs", () => new Response(docsPage("Kiln API reference"), { headers: { "Content-Type": "text/html; charset=utf-8" } }), {
      detail: operation({
        operationId: "getApiReference",
        summary: "Browsable API reference (works offline)",
        responses: { 200: { description: "An HTML page", content: { "text/html": { type: "string" } } } },
      }),
    })
    .get("/docs/standalone.js", ({ request }) => viewerScript.answer(request), {
      detail: operation({
        operationId: "getApiReferenceViewer",
        summary: "The reference viewer's script (Scalar, served by this server)",
        description: "Compressed (br or gzip) as Accept-Encoding asks, with an ETag per form; If-None-Match gives 304.",
        responses: { 200: { description: "JavaScript", content: { "text/javascript": { type: "string" } } } },
        headers: { 200: ["ETag"] },
        conditional: ["If-None-Match"],
        notModified: true,
      }),
    });
  return {
    plugin,
    describe(app: AnyElysia) {
      routesOf = () => app.routes as unknown as RouteLike[];
    },
  };
}
