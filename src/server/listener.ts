/**
 * The HTTP listener: what takes connections and hands each request to the app's fetch handler. Two
 * behind one small interface, chosen by HTTP_LISTENER, so src/index.ts drains and stops either alike:
 *
 * - `bun` (the default): Bun.serve, the fastest. Its HTTP layer answers `Expect: 100-continue` with
 *   `100 Continue` itself, before the app has seen the request.
 * - `node`: Bun's node:http server bridged to the same handler (src/server/node-listener.ts). It holds the
 *   `100 Continue` back until the app first reads the body, that is after the key, permission, rate
 *   limit and declared size were accepted; the bridge costs CPU on every request (bench/experiments/README.md).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { listenNode } from "./node-listener";
import {
  type FetchHandler,
  IDLE_TIMEOUT_SECONDS,
  type Listener,
  type ListenOptions,
  MAX_REQUEST_BODY_BYTES,
  setClientAddress,
} from "./transport";

export async function listen(options: ListenOptions, fetch: FetchHandler): Promise<Listener> {
  if (options.kind === "node") return listenNode(options, fetch);
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    async fetch(request, server) {
      setClientAddress(request, () => server.requestIP(request)?.address);
      const response = await fetch(request);
      // An event stream is quiet between events by design, and Bun's idle timeout is not reset by what the
      // server writes: it would cut every stream after 30 s. The stream ends a client that takes nothing itself.
      if (response.headers.get("content-type")?.startsWith("text/event-stream")) server.timeout(request, 0);
      return response;
    },
  });
  return {
    get url() {
      return server.url;
    },
    get pendingRequests() {
      return server.pendingRequests;
    },
    stop: (force) => server.stop(force),
  };
}

/**
 * Why the listener could not start, in one line naming the setting to change. Bun reports a host name
 * that does not resolve as another error (EADDRINUSE, EINPROGRESS), so such a name is looked up first.
 */
export async function listenFailure(error: unknown, options: Pick<ListenOptions, "port" | "hostname">): Promise<string> {
  const { port, hostname } = options;
  const code = (error as { code?: string } | undefined)?.code;
  if (isIP(hostname) === 0 && !(await resolves(hostname))) {
    return `HOST ${hostname} is not a name this machine resolves (HOST)`;
  }
  switch (code) {
    case "EADDRINUSE":
      return `port ${port} is in use on ${hostname} (PORT): stop what listens there or choose another port`;
    case "EACCES":
      return `port ${port} needs privileges this process lacks (PORT): choose one above 1023`;
    case "EADDRNOTAVAIL":
      return `HOST ${hostname} is not an address of this machine (HOST)`;
    default:
      return `cannot listen on ${hostname}:${port} (HOST, PORT): ${(error as Error)?.message ?? String(error)}`;
  }
}

const resolves = (hostname: string) =>
  lookup(hostname).then(
    () => true,
    () => false,
  );
