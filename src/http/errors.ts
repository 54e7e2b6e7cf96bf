/**
 * Typed errors and the one renderer that turns anything thrown into RFC 9457 problem+json
 * (docs/api.md, Errors). No stack trace, SQL or path ever leaves here: a non-HttpError is a 500 whose cause
 * is logged with the request id.
 */
import { Elysia } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { requestState, type Logger } from "./context";
import { ContentStoreFull, ContentStoreUnavailable } from "../storage/content-store";

const TITLES: Record<number, string> = {
  400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
  405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 412: "Precondition Failed",
  413: "Content Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests",
  500: "Internal Server Error", 503: "Service Unavailable", 507: "Insufficient Storage",
};

export interface FieldError { path: string; message: string }

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string, errors?: FieldError[]) => new HttpError(400, code, message, { errors });
export const validationError = (errors: FieldError[]) =>
  new HttpError(400, "validation_failed", errors.map((e) => `${e.path || "/"}: ${e.message}`).join("; "), { errors });
export const unauthorized = (message: string) => new HttpError(401, "unauthorized", message, { headers: { "WWW-Authenticate": "Bearer" } });
export const forbidden = (message: string) => new HttpError(403, "forbidden", message);
export const notFound = (code: string, message: string) => new HttpError(404, code, message);

export interface ProblemBody {
  success: false;
  error: string;
  code: string;
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  errors?: FieldError[];
}

export function problemResponse(error: HttpError, requestId: string, headers: Record<string, string> = {}): Response {
  const body: ProblemBody = {
    success: false,
    error: error.message,
    code: error.code,
    type: "about:blank",
    title: TITLES[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    requestId,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { ...headers, ...error.extra.headers, "Content-Type": "application/problem+json", "X-Request-Id": requestId },
  });
}

interface ValidationIssue { path?: string; message?: string; schema?: { error?: unknown } }

/** Most issues reported for one request: enough to name every field of a real body. */
const MAX_ISSUES = 50;

/**
 * The TypeBox issues of an Elysia ValidationError, read from its validator directly: Elysia's own
 * `all` getter formats each offending value into a template string, which throws (a 500) for a value
 * such as `{"toString": 1, "valueOf": 1}`.
 */
function validationIssues(error: { validator?: unknown; value?: unknown }): ValidationIssue[] {
  const validator = error.validator as { Errors?: (value: unknown) => Iterable<ValidationIssue> } | TSchema | undefined;
  if (!validator) return [];
  const found = typeof (validator as { Errors?: unknown }).Errors === "function"
    ? (validator as { Errors: (value: unknown) => Iterable<ValidationIssue> }).Errors(error.value)
    : Value.Errors(validator as TSchema, error.value);
  const issues: ValidationIssue[] = [];
  for (const issue of found) {
    issues.push(issue);
    if (issues.length >= MAX_ISSUES) break;
  }
  return issues;
}

/** TypeBox/Elysia validation errors → `errors[]` with JSON-pointer paths, one entry per field. */
export function fromValidation(error: { validator?: unknown; value?: unknown; message: string }, on: string): HttpError {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const issue of validationIssues(error)) {
    const path = issue.path ?? "";
    if (seen.has(path)) continue;
    seen.add(path);
    errors.push({ path, message: issue.message === "Expected required property" ? "required field is missing" : typeof issue.schema?.error === "string" ? issue.schema.error : describeIssue(issue) });
  }
  if (errors.length === 0) errors.push({ path: "", message: `invalid ${on}` });
  const where = on === "body" ? "" : ` in ${on}`;
  return new HttpError(400, "validation_failed", errors.map((e) => `${e.path || "/"}${where}: ${e.message}`).join("; "), { errors });
}

function describeIssue(issue: ValidationIssue): string {
  if (issue.message === "Unexpected property") return "unknown field";
  return issue.message ?? "invalid value";
}

/**
 * Errors meaning the database cannot be reached right now (refused or lost connections, a server
 * shutting down or starting up: SQLSTATE classes 08 and 57P), looked for through Drizzle's `cause`.
 */
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT", "57P01", "57P02", "57P03"]);

export function isDatabaseUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && (UNREACHABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  }
  return false;
}

export const databaseUnavailable = () =>
  new HttpError(503, "database_unavailable", "The database cannot be reached right now; retry shortly", { headers: { "Retry-After": "1" } });

/** Everything thrown anywhere leaves through here as problem+json. */
export const errorHandler = (options: {
  logger: Logger;
  /** decides 401/403 for unknown routes inside an API area, before their 404 */
  authorizeUnknownRoute: (request: Request, path: string) => Promise<unknown>;
  /** the methods the app serves on a path (a 405 with Allow rather than a 404 when there are some) */
  methodsAllowed: (path: string) => string[];
}) =>
  new Elysia({ name: "kiln.errors" }).onError({ as: "global" }, async ({ code, error, request, path }) => {
    const state = requestState(request);
    let problem: HttpError;
    if (error instanceof HttpError) {
      problem = error;
      if (error.status === 500) options.logger.log("error", "server-side failure", { requestId: state.requestId, code: error.code, error: error.message });
    } else if (error instanceof ContentStoreUnavailable || error instanceof ContentStoreFull) problem = storeProblem(options.logger, error, state.requestId);
    else if (code === "VALIDATION") {
      const validation = error as { type: string; value?: unknown; validator?: unknown; message: string };
      problem = validation.type === "body" && validation.value === undefined
        ? badRequest("body_required", "A JSON request body is required")
        : fromValidation(validation, validation.type);
    } else if (code === "NOT_FOUND") {
      try {
        await options.authorizeUnknownRoute(request, path);
        const allowed = options.methodsAllowed(path);
        problem = allowed.length > 0
          ? new HttpError(405, "method_not_allowed", `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`, { headers: { Allow: allowed.join(", ") } })
          : notFound("route_not_found", `No route for ${request.method} ${path}`);
      } catch (authError) {
        problem = authError instanceof HttpError ? authError : unexpected(options.logger, authError, state.requestId);
      }
    } else if (code === "PARSE") problem = badRequest("malformed_json", "Malformed request body");
    else problem = unexpected(options.logger, error, state.requestId);
    state.status = problem.status;
    return problemResponse(problem, state.requestId, state.headers);
  });

/** A database that cannot be reached is 503 (retry); anything else unforeseen is a logged 500. */
function unexpected(logger: Logger, cause: unknown, requestId: string): HttpError {
  if (!isDatabaseUnreachable(cause)) return internal(logger, cause, requestId);
  let root = cause as { message?: string; cause?: unknown };
  while (root.cause) root = root.cause as typeof root; // Drizzle's own message quotes the query and its parameters
  logger.log("warn", "database unreachable", { requestId, error: root.message });
  return databaseUnavailable();
}

/** The content store failed a request that did nothing: the client may retry (503) or free space (507). */
function storeProblem(logger: Logger, cause: ContentStoreUnavailable | ContentStoreFull, requestId: string): HttpError {
  logger.log("warn", "content store failure", { requestId, error: cause.message });
  return cause instanceof ContentStoreFull
    ? new HttpError(507, "insufficient_storage", "The content store has no room for this content; nothing was stored")
    : new HttpError(503, "content_store_unavailable", "The content store cannot be reached; nothing was changed, retry later", { headers: { "Retry-After": "5" } });
}

const routePatterns = new WeakMap<readonly unknown[], { method: string; pattern: RegExp }[]>();

/** The methods of `routes` (Elysia's route list) whose path pattern matches `path`; HEAD goes with GET. */
export function methodsAllowed(routes: readonly { method: string; path: string }[], path: string): string[] {
  let patterns = routePatterns.get(routes);
  if (!patterns) {
    patterns = routes.filter((route) => route.method !== "ALL").map((route) => ({
      method: route.method,
      pattern: new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}$`),
    }));
    routePatterns.set(routes, patterns);
  }
  const methods = new Set(patterns.filter(({ pattern }) => pattern.test(path)).map(({ method }) => method));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

function internal(logger: Logger, cause: unknown, requestId: string): HttpError {
  const err = cause as Error;
  logger.log("error", "unhandled error", { requestId, error: err?.message, stack: err?.stack });
  return new HttpError(500, "internal_error", "The server could not complete the request; it has been logged with this request id");
}
