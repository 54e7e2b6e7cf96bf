/**
 * The document of GET /openapi.json, built here rather than by @elysiajs/openapi because the app-wide
 * raw body parser hides route body schemas from that plugin and it declares no error responses. One central pass adds
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
import type { TSchema } from "@sinclair/typebox";
import { requiredPermission } from "../permissions";
import { addProblem, HEADERS, headerRefs, type Json, Problem, problemResponse, RATE_LIMIT_HEADERS, SHARED } from "./responses";

/** JSON Schema keywords TypeBox and Elysia accept that OpenAPI 3.1 (and strict validators) do not. */
const NON_STANDARD = new Set(["error", "errorMessage"]);

/** A plain JSON copy of a TypeBox schema: symbols and non-standard keywords dropped, titled schemas named. */
export function cleanSchema(schema: unknown, named: Map<string, { json: string; schema: unknown }>): unknown {
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

export interface RouteLike {
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
