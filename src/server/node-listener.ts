/**
 * HTTP_LISTENER=node: Bun's node:http server bridged to the app's fetch handler, for `Expect:
 * 100-continue` done right. node:http lets a server hold the `100 Continue` back ("checkContinue"),
 * which Bun.serve cannot. The request handed to the app gets a lazy body: its first read sends the 100,
 * then streams the socket's bytes with backpressure. Kiln decides the key, permission, rate limit and
 * declared size before it reads a body byte, so the 100 goes out exactly when those were accepted; a
 * refused request is answered without it and its connection closed, so a body the client sends anyway
 * is never read as a next request. A client that goes away aborts `request.signal` and stops the
 * body being read. The answer is written back by node-response.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cut, refuse, writeResponse } from "./node-response";
import {
  type FetchHandler,
  IDLE_TIMEOUT_SECONDS,
  type Listener,
  type ListenOptions,
  MAX_REQUEST_BODY_BYTES,
  setClientAddress,
} from "./transport";

export async function listenNode(options: Pick<ListenOptions, "port" | "hostname">, fetch: FetchHandler): Promise<Listener> {
  let pendingRequests = 0;
  let stopped: Promise<void> | undefined;
  const server = createServer();
  server.requestTimeout = 0; // no deadline for a whole request: a large upload on a slow link may take long
  server.keepAliveTimeout = IDLE_TIMEOUT_SECONDS * 1000;
  // The connection idle timeout of Bun's HTTP layer (Bun.serve's idleTimeout). A connection with a
  // request in flight is closed by it only while it waits on its client (the Exchange's "timeout" listener).
  server.setTimeout(IDLE_TIMEOUT_SECONDS * 1000);

  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    pendingRequests++;
    const exchange = new Exchange(req, res, expectsContinue, () => stopped === undefined);
    res.once("close", () => {
      pendingRequests--;
      exchange.closed();
    });
    exchange.run(fetch).catch(() => cut(res));
  };
  server.on("request", (req, res) => serve(req, res, false));
  server.on("checkContinue", (req, res) => serve(req, res, true));
  // Bun's node:http matches `100-continue` case-sensitively; RFC 9110 does not. Another expectation is
  // served as if absent, as Bun.serve does (node:http would answer 417).
  server.on("checkExpectation", (req, res) => serve(req, res, /^\s*100-continue\s*$/i.test(String(req.headers.expect))));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://${options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname}:${port}/`);
  return {
    url,
    get pendingRequests() {
      return pendingRequests;
    },
    stop(force = false) {
      // From now on answers carry `Connection: close`; connections without a request in flight close now.
      stopped ??= new Promise<void>((resolve) => server.close(() => resolve()));
      if (force) server.closeAllConnections();
      else server.closeIdleConnections();
      return stopped;
    },
  };
}

/** One request and its answer. */
class Exchange {
  /** aborts request.signal when the client goes before the whole answer was sent */
  private readonly aborted = new AbortController();
  /** true while the exchange waits on the client (for body bytes, or to take answer bytes) rather than on the app */
  private waitingOnClient = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly expectsContinue: boolean,
    /** false once the server stops */
    private readonly keepAlive: () => boolean,
  ) {
    // Emitted by the idle timeout; with a listener the connection is left open: the app may take its time.
    res.on("timeout", () => {
      if (this.waitingOnClient) cut(res);
    });
  }

  closed(): void {
    if (!this.res.writableFinished) this.aborted.abort();
  }

  private readonly waiting = (waiting: boolean) => {
    this.waitingOnClient = waiting;
  };

  async run(fetch: FetchHandler): Promise<void> {
    const { req, res } = this;
    const declared = req.headers["content-length"];
    // Bun.serve's own answer to a body over its limit: an empty 413, and the connection closed.
    if (declared !== undefined && Number(declared) > MAX_REQUEST_BODY_BYTES) return refuse(res, 413);
    const signal = this.aborted.signal;
    const body = hasBody(req) ? new LazyBody(req, res, this.expectsContinue, this.waiting) : undefined;
    let request: Request;
    try {
      request = new Request(urlOf(req), {
        method: req.method,
        headers: headersOf(req.rawHeaders),
        body: body?.stream,
        signal,
        duplex: "half",
      } as RequestInit);
      const address = req.socket.remoteAddress;
      setClientAddress(request, () => address);
    } catch {
      return refuse(res, 400);
    }
    let response: Response;
    try {
      response = await fetch(request);
    } catch (error) {
      // The app answers its own errors (one onError); this is a fault outside it, as Bun.serve answers one.
      if (!signal.aborted) console.error("kiln: the request handler failed:", error);
      response = new Response(null, { status: 500 });
    }
    if (body?.overflowed) {
      await response.body?.cancel().catch(() => {});
      return refuse(res, 413);
    }
    if (res.destroyed) {
      await response.body?.cancel().catch(() => {});
      return;
    }
    // A body announced with `Expect: 100-continue` and never asked for is not coming (or comes late):
    // the connection closes rather than reading it, or reading it as the next request.
    const keepAlive = this.keepAlive() && !(this.expectsContinue && announcesBody(req) && !body?.pulled);
    await writeResponse(req, res, response, keepAlive, signal, this.waiting);
  }
}

function announcesBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return length !== undefined ? length !== "0" : req.headers["transfer-encoding"] !== undefined;
}

/** Whether the app gets a body (a GET's or HEAD's is not passed on, as with Bun.serve). */
const hasBody = (req: IncomingMessage) => req.method !== "GET" && req.method !== "HEAD" && announcesBody(req);

/** The request URL as Bun.serve builds it: the Host header's origin and the request target. */
function urlOf(req: IncomingMessage): string {
  const target = req.url ?? "/";
  if (!target.startsWith("/")) return target; // absolute form (`GET http://host/path`)
  return `http://${req.headers.host ?? "localhost"}${target}`;
}

function headersOf(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

/**
 * The request body as the app reads it: nothing happens until the first read, which sends `100
 * Continue` (when the client asked for it) and starts taking the socket's bytes; the socket is paused
 * while the app has a chunk queued, so a slow reader holds the client back (TCP) rather than buffering.
 */
class LazyBody {
  /** true once the app asked for the body */
  pulled = false;
  /** true when more than MAX_REQUEST_BODY_BYTES came */
  overflowed = false;
  /** drops what is left of the body (once the app stopped reading it) */
  private discard = () => {};
  readonly stream: ReadableStream<Uint8Array>;

  constructor(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean, waitingOnClient: (waiting: boolean) => void) {
    let received = 0;
    let settled = false;
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => {
          waitingOnClient(true);
          if (this.pulled) {
            req.resume();
            return;
          }
          this.pulled = true;
          if (expectsContinue && !res.headersSent) res.writeContinue();
          const fail = (error: Error) => {
            if (settled) return;
            settled = true;
            waitingOnClient(false);
            controller.error(error);
          };
          const onData = (chunk: Buffer) => {
            if (settled) return;
            waitingOnClient(false);
            received += chunk.byteLength;
            if (received > MAX_REQUEST_BODY_BYTES) {
              this.overflowed = true;
              req.pause();
              return fail(new Error(`The request body exceeds ${MAX_REQUEST_BODY_BYTES} bytes`));
            }
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            // one chunk may wait in the queue; beyond it the socket waits
            if ((controller.desiredSize ?? 0) < 0) req.pause();
          };
          req.on("data", onData);
          this.discard = () => {
            req.off("data", onData);
            req.resume();
          };
          req.once("end", () => {
            if (settled) return;
            settled = true;
            waitingOnClient(false);
            controller.close();
          });
          // Bun.serve's error for a client gone mid-body (node:http's ECONNRESET would read as a database outage in errors.ts)
          const gone = () => fail(new DOMException("The connection was closed.", "AbortError"));
          req.once("error", gone);
          req.once("close", gone);
        },
        cancel: () => {
          settled = true;
          // The rest is read and dropped, so the connection can carry the next request. (A body never
          // read is dropped by node:http itself once the answer is sent; one read in part is left paused.)
          this.discard();
        },
      },
      { highWaterMark: 0 },
    );
  }
}
