/**
 * HTTP_LISTENER=node: Bun's node:http server bridged to the app's fetch handler, for `Expect:
 * 100-continue` done right. node:http lets a server hold the `100 Continue` back ("checkContinue"),
 * which Bun.serve cannot. The request handed to the app gets a lazy body: its first read sends the 100,
 * then streams the socket's bytes with backpressure. Kiln decides the key, permission, rate limit and
 * declared size before it reads a body byte, so the 100 goes out exactly when those were accepted; a
 * refused request is answered without it and its connection closed, so a body the client sends anyway
 * is never read as a next request.
 *
 * The answer is written back as Bun.serve would send it: status, every header field (each Set-Cookie
 * on its own line), the app's Content-Length (else one measured for a body that ends at once, else
 * chunked), no body for HEAD, 204 and 304, bodies streamed with backpressure, and Range (206, 416, with
 * If-Range) on a 200 with a file body as Bun.serve serves them (Kiln's downloads answer their ranges
 * themselves, src/modules/documents/download.ts; a 200 to a Range request is then one they chose to
 * send whole, which the same rules leave whole). A client that goes away aborts `request.signal` and stops the
 * body being read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { byteRange, ifRangeHolds } from "./ranges";
import {
  type FetchHandler,
  IDLE_TIMEOUT_SECONDS,
  type Listener,
  type ListenOptions,
  MAX_REQUEST_BODY_BYTES,
  setClientAddress,
} from "./transport";

/**
 * An answer of unknown length is gathered while its bytes are there at once (a body made in memory),
 * up to this size, to be sent with a Content-Length; past it, or when the bytes come later (a stream),
 * it goes out chunked.
 */
const GATHER_MAX_BYTES = 8 << 20;
/** Header fields of the connection, which node:http writes itself. */
const CONNECTION_FIELDS = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade"]);

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
      setClientAddress(request, req.socket.remoteAddress);
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

/**
 * Closes the connection at once. (ServerResponse.destroy() before the head was sent would first write
 * `200 OK` with `Connection: close`, an answer the app never gave.)
 */
function cut(res: ServerResponse): void {
  if (res.socket) res.socket.destroy();
  else res.destroy();
}

/** An empty answer that closes the connection (Bun.serve's for a body over its limit or a request it cannot read). */
function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, [
    ["connection", "close"],
    ["content-length", "0"],
  ]);
  res.end();
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

/** A Bun.file (or an S3 spool file): a Blob with a path, which Bun.serve serves with ranges. */
const isFile = (blob: Blob) => typeof (blob as { name?: unknown }).name === "string";

async function writeResponse(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  keepAlive: boolean,
  signal: AbortSignal,
  waitingOnClient: (waiting: boolean) => void,
): Promise<void> {
  let status = response.status;
  const headers: [string, string][] = [];
  for (const [name, value] of response.headers) if (!CONNECTION_FIELDS.has(name)) headers.push([name, value]);
  if (!keepAlive) headers.push(["connection", "close"]);
  const head = () => res.writeHead(status, response.statusText || undefined, headers);
  let body = response.body;
  let length = response.headers.get("content-length");

  if (
    status === 200 &&
    req.method === "GET" &&
    req.headers.range !== undefined &&
    ifRangeHolds(headerValue(req.headers["if-range"]), response.headers.get("etag")) &&
    length !== null &&
    body !== null &&
    !response.headers.has("content-encoding")
  ) {
    // Only here is the body taken as a Blob: a download's is one (a file), so this reads nothing.
    const blob = await response.blob();
    body = blob.stream();
    const range = isFile(blob) ? byteRange(req.headers.range, blob.size) : undefined;
    if (range !== undefined) {
      setHeader(headers, "accept-ranges", "bytes");
      if (range === "unsatisfiable") {
        status = 416;
        setHeader(headers, "content-range", `bytes */${blob.size}`);
        length = "0";
        body = null;
      } else {
        status = 206;
        setHeader(headers, "content-range", `bytes ${range.start}-${range.end}/${blob.size}`);
        length = String(range.end - range.start + 1);
        body = blob.slice(range.start, range.end + 1).stream();
      }
      setHeader(headers, "content-length", length);
    }
  }

  const bodyless = req.method === "HEAD" || status === 204 || status === 304 || status < 200;
  if (bodyless || body === null) {
    if (body !== null && req.method === "HEAD" && length === null && status !== 204 && status !== 304) {
      // HEAD announces the length GET would send, when it is known at once
      const reader = body.getReader();
      const gathered = await gather(reader);
      if (gathered.done) headers.push(["content-length", String(gathered.size)]);
      else await reader.cancel().catch(() => {});
    } else {
      await body?.cancel().catch(() => {});
    }
    if (!bodyless && length === null) headers.push(["content-length", "0"]);
    head();
    res.end();
    return;
  }

  const reader: Reader = body.getReader();
  // the client gone: the answer's stream is cancelled at once (an export stops querying)
  const stop = () => {
    reader.cancel().catch(() => {});
  };
  try {
    let pending: Promise<ReadResult> | undefined;
    if (length === null) {
      const gathered = await gather(reader);
      if (gathered.done) {
        headers.push(["content-length", String(gathered.size)]);
        head();
        if (gathered.chunks.length === 1) return void res.end(gathered.chunks[0]);
        for (const chunk of gathered.chunks) res.write(chunk);
        return void res.end();
      }
      head(); // no length: node:http sends the body chunked
      for (const chunk of gathered.chunks) res.write(chunk);
      pending = gathered.pending;
    } else {
      head();
    }
    if (res.destroyed) return stop();
    signal.addEventListener("abort", stop);
    for (;;) {
      const { done, value } = await (pending ?? reader.read());
      pending = undefined;
      if (done) break;
      if (res.destroyed) return stop();
      if (!res.write(value)) {
        waitingOnClient(true);
        await drained(res);
        waitingOnClient(false);
      }
    }
    if (!res.destroyed) res.end();
  } catch {
    // the answer's stream failed part way: cut the connection, so the client sees a truncated body
    cut(res);
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/** A request header field as one value (repeated fields joined, as a Request's Headers would). */
const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(", ") : value);

function setHeader(headers: [string, string][], name: string, value: string): void {
  const index = headers.findIndex(([field]) => field === name);
  if (index === -1) headers.push([name, value]);
  else headers[index] = [name, value];
}

type Reader = Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel">;
type ReadResult = Awaited<ReturnType<Reader["read"]>>;

/**
 * How many microtask turns a next chunk may take to count as there at once. A body made in memory
 * (a string, bytes, a Blob) yields its next chunk within 0 to 2 turns (Bun 1.4); a stream's next chunk
 * that waits on I/O takes a turn of the event loop at least. A wrong guess costs only chunked framing.
 */
const READY_TURNS = 8;

interface Gathered {
  chunks: Uint8Array[];
  size: number;
  /** true when the body ended: `chunks` are all of it */
  done: boolean;
  /** the read under way when gathering stopped */
  pending?: Promise<ReadResult>;
}

/**
 * The body's first chunk, then the next ones as long as they are there at once (a body in memory or a
 * stream that has them queued) and GATHER_MAX_BYTES is not passed.
 */
async function gather(reader: Reader): Promise<Gathered> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let next = reader.read();
  for (;;) {
    if (chunks.length > 0) {
      for (let turn = 0; turn < READY_TURNS && Bun.peek.status(next) === "pending"; turn++) await null;
      if (Bun.peek.status(next) === "pending") return { chunks, size, done: false, pending: next };
    }
    const result = await next;
    if (result.done) return { chunks, size, done: true };
    chunks.push(result.value);
    size += result.value.byteLength;
    if (size > GATHER_MAX_BYTES) return { chunks, size, done: false };
    next = reader.read();
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
