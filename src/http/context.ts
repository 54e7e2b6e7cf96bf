/**
 * Request id, timing and one JSON log line per request. Never logs a key or a body.
 */
import type { Logger } from "../observability/logger";
import { type RequestState, requestState } from "../server/request-state";

declare module "../server/request-state" {
  interface RequestState {
    accountId?: string;
    /** set when an error response was rendered, for the log line */
    status?: number;
    /** set by a write that made no event whatever its answer (a run that saves nothing): no notification follows it */
    madeNoEvents?: boolean;
  }
}

export function markNoEvents(request: Request): void {
  requestState(request).madeNoEvents = true;
}

/** The status on the wire: an error's, a Response's own (a handler-built 304, 206, 416), else set.status. */
export function statusSent(state: RequestState, response: unknown, setStatus: unknown): number {
  if (state.status !== undefined) return state.status;
  if (response instanceof Response) return response.status;
  return typeof setStatus === "number" ? setStatus : 200;
}

/** The URL's path, without the query: what Elysia calls `path`, without parsing the URL. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/**
 * The per-request log line, written by the fetch handler (app.ts) once the app has answered, with the
 * status of the final Response. Not an Elysia hook: an after-response hook costs every request a
 * deferred callback, and below LOG_LEVEL=info nothing at all is done (undefined).
 */
export function requestLog(logger: Logger): ((request: Request, response: Response) => void) | undefined {
  if (logger.enabled?.("info") === false) return undefined;
  return (request, response) => {
    const state = requestState(request);
    logger.log("info", "request", {
      method: request.method,
      path: pathOf(request.url),
      status: response.status,
      durationMs: Math.round((performance.now() - state.startedAt) * 100) / 100,
      requestId: state.requestId,
      accountId: state.accountId,
    });
  };
}
