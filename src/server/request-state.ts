/**
 * Everything one request carries between the layers that handle it, in one object per request: made
 * when the request first reaches Kiln (the listener, or the app for a request made in process) and
 * reached from the Request by any hook, from the listener to the error handler and the log line.
 *
 * The fields here are the ones every layer reads. A layer above adds its own beside the code that uses
 * them, by merging into this interface (`declare module "…/server/request-state"`), so the state stays
 * one typed object while this file knows nothing of the layers above it.
 */
import { requestIdFor } from "./request-id";

export interface RequestState {
  readonly requestId: string;
  readonly startedAt: number;
  /** headers that every response of this request carries (request id, rate limit), set on the final Response (app.ts) */
  headers: Record<string, string>;
  /** the peer address as the listener saw it, asked for when first needed (none for requests made in process) */
  clientAddress?: () => string | undefined;
}

const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    const requestId = requestIdFor(request);
    state = { requestId, startedAt: performance.now(), headers: { "X-Request-Id": requestId } };
    states.set(request, state);
  }
  return state;
}

/** The request's own headers (its id, its rate limit) on the final Response, except those the route already set there. */
export function addStateHeaders(state: RequestState, response: Response): void {
  for (const name in state.headers) if (!response.headers.has(name)) response.headers.set(name, state.headers[name]!);
}
