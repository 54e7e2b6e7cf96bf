/**
 * Typed errors and the one renderer that turns anything thrown into RFC 9457 problem+json
 * (docs/api.md, Errors). No stack trace, SQL or path ever leaves here: a non-HttpError is a 500 whose cause
 * is logged with the request id.
 */
import { Elysia } from "elysia";
import { ERRORS, STATUS_TITLES } from "../core/error-codes";
import { databaseFault, type FieldError, fromValidation, HttpError, httpError } from "../core/errors";
import type { Logger } from "../observability/logger";
import { requestState } from "../server/request-state";
import { ContentStoreFull, ContentStoreUnavailable } from "../storage/content-store";

export { STATUS_TITLES };

export interface ProblemBody {
  success: false;
  error: string;
  code: string;
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  schema?: { id: string; version: number };
  errors?: FieldError[];
}

export function problemResponse(error: HttpError, requestId: string): Response {
  const body: ProblemBody = {
    success: false,
    error: error.message,
    code: error.code,
    type: "about:blank",
    title: STATUS_TITLES[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    requestId,
    ...(error.extra.schema ? { schema: error.extra.schema } : {}),
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    ...error.extra.members,
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { ...error.extra.headers, "Content-Type": "application/problem+json", "X-Request-Id": requestId },
  });
}

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
      if (error.status === 500)
        options.logger.log("error", "server-side failure", { requestId: state.requestId, code: error.code, error: error.message });
    } else if (error instanceof ContentStoreUnavailable || error instanceof ContentStoreFull)
      problem = storeProblem(options.logger, error, state.requestId);
    else if (code === "VALIDATION") {
      const validation = error as { type: string; value?: unknown; validator?: unknown; message: string };
      problem =
        validation.type === "body" && validation.value === undefined
          ? httpError(ERRORS.body_required, "A JSON request body is required")
          : fromValidation(validation, validation.type);
    } else if (code === "NOT_FOUND") {
      try {
        await options.authorizeUnknownRoute(request, path);
        const allowed = options.methodsAllowed(path);
        problem =
          allowed.length > 0
            ? httpError(ERRORS.method_not_allowed, `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`, {
                headers: { Allow: allowed.join(", ") },
              })
            : httpError(ERRORS.route_not_found, `No route for ${request.method} ${path}`);
      } catch (authError) {
        problem = authError instanceof HttpError ? authError : unexpected(options.logger, authError, state.requestId);
      }
    } else if (code === "PARSE") problem = httpError(ERRORS.malformed_json, "Malformed request body");
    else problem = unexpected(options.logger, error, state.requestId);
    state.status = problem.status;
    // the request state's other headers (rate limit) go on it with every answer's, in the fetch handler (app.ts)
    return problemResponse(problem, state.requestId);
  });

/**
 * A database that cannot be reached, one that rolled the request back in a conflict with another (a
 * deadlock, a serialization failure), or one whose bounds ran out (a lock, statement, idle-in-transaction
 * or pool-acquire timeout) is 503 (retry); anything else unforeseen is a logged 500.
 */
function unexpected(logger: Logger, cause: unknown, requestId: string): HttpError {
  const problem = databaseFault(cause);
  if (!problem) return internal(logger, cause, requestId);
  let root = cause as { message?: string; cause?: unknown };
  while (root.cause) root = root.cause as typeof root; // Drizzle's own message quotes the query and its parameters
  logger.log("warn", problem.log, { requestId, error: root.message });
  return problem.error;
}

/** The content store failed a request that did nothing: the client may retry (503) or free space (507). */
function storeProblem(logger: Logger, cause: ContentStoreUnavailable | ContentStoreFull, requestId: string): HttpError {
  logger.log("warn", "content store failure", { requestId, error: cause.message });
  return cause instanceof ContentStoreFull
    ? httpError(ERRORS.insufficient_storage, "The content store has no room for this content; nothing was stored")
    : httpError(ERRORS.content_store_unavailable, "The content store cannot be reached; nothing was changed, retry later", {
        headers: { "Retry-After": "5" },
      });
}

const routePatterns = new WeakMap<readonly unknown[], { method: string; pattern: RegExp }[]>();

/** The methods of `routes` (Elysia's route list) whose path pattern matches `path`; HEAD goes with GET. */
export function methodsAllowed(routes: readonly { method: string; path: string }[], path: string): string[] {
  let patterns = routePatterns.get(routes);
  if (!patterns) {
    patterns = routes
      .filter((route) => route.method !== "ALL")
      .map((route) => ({
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
  return httpError(ERRORS.internal_error, "The server could not complete the request; it has been logged with this request id");
}
