/**
 * The answer is written back as Bun.serve would send it: status, every header field (each Set-Cookie
 * on its own line), the app's Content-Length (else one measured for a body that ends at once, else
 * chunked), no body for HEAD, 204 and 304, bodies streamed with backpressure, and Range (206, 416, with
 * If-Range) on a 200 with a file body as Bun.serve serves them (Kiln's downloads answer their ranges
 * themselves, src/modules/documents/download.ts; a 200 to a Range request is then one they chose to
 * send whole, which the same rules leave whole).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { byteRange, ifRangeHolds } from "./ranges";

/**
 * An answer of unknown length is gathered while its bytes are there at once (a body made in memory),
 * up to this size, to be sent with a Content-Length; past it, or when the bytes come later (a stream),
 * it goes out chunked.
 */
const GATHER_MAX_BYTES = 8 << 20;
/** Header fields of the connection, which node:http writes itself. */
const CONNECTION_FIELDS = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade"]);

/**
 * Closes the connection at once. (ServerResponse.destroy() before the head was sent would first write
 * `200 OK` with `Connection: close`, an answer the app never gave.)
 */
export function cut(res: ServerResponse): void {
  if (res.socket) res.socket.destroy();
  else res.destroy();
}

/** An empty answer that closes the connection (Bun.serve's for a body over its limit or a request it cannot read). */
export function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, [
    ["connection", "close"],
    ["content-length", "0"],
  ]);
  res.end();
}

/** A Bun.file (or an S3 spool file): a Blob with a path, which Bun.serve serves with ranges. */
const isFile = (blob: Blob) => typeof (blob as { name?: unknown }).name === "string";

export async function writeResponse(
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
