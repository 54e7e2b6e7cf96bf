/**
 * Request id, timing and one JSON log line per request. Never logs a key or a body.
 */
import { Elysia } from "elysia";
import type { LogFormat, LogLevel } from "../config";
import { batchedStdout } from "../server/log-writer";
import { requestState, type RequestState } from "../server/request-state";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  log(level: Exclude<LogLevel, "silent">, message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = batchedStdout(), format: LogFormat = "json"): Logger {
  const threshold = LEVELS[level];
  const render = format === "pretty" ? prettyLine : jsonLine;
  return {
    log(lvl, message, fields = {}) {
      if (LEVELS[lvl] < threshold) return;
      write(render(new Date().toISOString(), lvl, message, fields));
    },
  };
}

function jsonLine(time: string, level: string, message: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ time, level, msg: message, ...fields });
}

/** For a person at a terminal: time, level, message, then the fields as key=value (strings JSON-quoted only when they hold spaces). */
function prettyLine(time: string, level: string, message: string, fields: Record<string, unknown>): string {
  const parts = [time.slice(11, 23), level.toUpperCase().padEnd(5), message];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = typeof value === "string" && !/[\s"]/.test(value) ? value : JSON.stringify(value);
    parts.push(`${key}=${text}`);
  }
  return parts.join(" ");
}

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
