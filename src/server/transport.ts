/** What both listeners share: the shape src/index.ts drives, their limits, and each request's peer address. */
import type { HttpListener } from "../config";
import { requestState } from "./request-state";

/** What src/index.ts needs of a listening server (the subset of Bun.Server it used). */
export interface Listener {
  readonly url: URL;
  /** requests received and not yet answered in full */
  readonly pendingRequests: number;
  /**
   * Stops taking connections; resolves once every connection is closed. Without `force`, requests in
   * flight finish first (idle keep-alive connections close at once); with it, they are cut.
   */
  stop(force?: boolean): Promise<void>;
}

export type FetchHandler = (request: Request) => Response | Promise<Response>;

export interface ListenOptions {
  kind: HttpListener;
  port: number;
  hostname: string;
}

/**
 * Larger request bodies are refused by the listener itself (an empty 413 that closes the connection);
 * smaller ones reach the app, which enforces its own, smaller limits with problem+json answers.
 */
export const MAX_REQUEST_BODY_BYTES = 1 << 30;
/** A connection waiting on its client this long (an idle keep-alive, a stalled upload or download) is closed. */
export const IDLE_TIMEOUT_SECONDS = 30;

/**
 * The peer address of a request, as the listener saw it (none for requests made in process). Given as
 * a function: only a key not yet cached needs it (failed-authentication throttling), and asking Bun for
 * it costs about 2 µs a request, so it is asked on that first use only.
 */
export function setClientAddress(request: Request, address: () => string | undefined): void {
  requestState(request).clientAddress = address;
}

export const clientAddressOf = (request: Request): string | undefined => requestState(request).clientAddress?.() || undefined;
