/**
 * The HTTP listener: what takes connections and hands each request to the app's fetch handler. Two
 * behind one small interface, chosen by HTTP_LISTENER, so src/index.ts drains and stops either alike:
 *
 * - `bun` (the default): Bun.serve, the fastest. Its HTTP layer answers `Expect: 100-continue` with
 *   `100 Continue` itself, before the app has seen the request.
 * - `node`: Bun's node:http server bridged to the same handler (src/http/node-listener.ts). It holds the
 *   `100 Continue` back until the app first reads the body, that is after the key, permission, rate
 *   limit and declared size were accepted; the bridge costs CPU on every request (bench/README.md).
 */
import type { HttpListener } from "../config";
import { listenNode } from "./node-listener";
import { setClientAddress } from "./context";

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

export async function listen(options: ListenOptions, fetch: FetchHandler): Promise<Listener> {
  if (options.kind === "node") return listenNode(options, fetch);
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    fetch(request, server) {
      setClientAddress(request, server.requestIP(request)?.address);
      return fetch(request);
    },
  });
  return {
    get url() { return server.url; },
    get pendingRequests() { return server.pendingRequests; },
    stop: (force) => server.stop(force),
  };
}
