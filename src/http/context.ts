/**
 * Request id, timing and one JSON log line per request. Never logs a key or a body.
 */
import { Elysia } from "elysia";
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

/** Request ids and the per-request log line, for every route of the app (public ones included). */
export const requestContext = (logger: Logger) =>
  new Elysia({ name: "kiln.context" })
    .onRequest(({ request, set }) => {
      set.headers["X-Request-Id"] = requestState(request).requestId;
    })
    .onAfterResponse({ as: "global" }, ({ request, set, path, responseValue }) => {
      const state = requestState(request);
      logger.log("info", "request", {
        method: request.method,
        path,
        status: statusSent(state, responseValue, set.status),
        durationMs: Math.round((performance.now() - state.startedAt) * 100) / 100,
        requestId: state.requestId,
        accountId: state.accountId,
      });
    });
