/**
 * Response compression, gzip or br as `Accept-Encoding` asks (q-values honoured, `*` understood), for
 * JSON bodies (application/json, +json, NDJSON) and document downloads larger than 1 KiB. Never for a
 * client that does not ask, a Range request (downloads answer those from the stored bytes), or a 206/304/204.
 *
 * A compressed representation gets its own strong ETag (RFC 9110 §8.8.3): `"<tag>-gzip"` or `"<tag>-br"`.
 * The conditional checks (documents/etag.ts) read such a tag as the tag it was made from, so a client
 * that cached the compressed body still gets its 304, and its If-Match still matches.
 *
 * Buffered bodies are compressed off the main thread (zlib's thread pool); streamed ones (downloads,
 * exports) through a zlib stream, chunk by chunk. Brotli runs at quality 4: its default, 11, takes
 * seconds per megabyte, far too slow for answers made on the fly.
 */
import { Readable } from "node:stream";
import { promisify } from "node:util";
import zlib from "node:zlib";

export const COMPRESSION_MIN_BYTES = 1024;
/** Bodies of a known size up to this are compressed in one call; larger ones as a stream. */
const BUFFERED_MAX_BYTES = 64 * 1024;

export type Coding = "br" | "gzip";

const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } };
const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/**
 * The coding to answer with, or undefined for identity. Of br and gzip the one with the higher q wins
 * (br on a tie); `*` gives its q to a coding not listed; q=0 refuses.
 */
export function negotiateCoding(acceptEncoding: string | null): Coding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.split(";").map((piece) => piece.trim());
    if (!name) continue;
    const q = params.find((param) => /^q=/i.test(param));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name.toLowerCase(), Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0);
  }
  const weightOf = (coding: Coding) =>
    weights.get(coding) ?? (coding === "gzip" ? weights.get("x-gzip") : undefined) ?? weights.get("*") ?? 0;
  const br = weightOf("br");
  const gz = weightOf("gzip");
  if (br <= 0 && gz <= 0) return undefined;
  return br >= gz ? "br" : "gzip";
}

const CODED_TAG = /-(gzip|br)"$/;

/** `"abc-gzip"` → `"abc"`: the tag of the representation a compressed one was made from. */
export function uncodedETag(tag: string): string {
  return tag.replace(CODED_TAG, '"');
}

function codedETag(tag: string, coding: Coding): string {
  return tag.endsWith('"') ? `${tag.slice(0, -1)}-${coding}"` : tag;
}

function isCompressible(contentType: string | null): boolean {
  if (!contentType) return false;
  // Kiln's own answers, without taking the header apart on every request
  if (contentType === "application/json" || contentType.startsWith("application/json;")) return true;
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json") || type === "application/x-ndjson";
}

/** NDJSON is streamed (exports, import results); other JSON of unknown length was made in memory. */
const isStream = (response: Response) => response.headers.get("content-type")!.includes("ndjson");

function addVary(headers: Headers): void {
  const vary = headers.get("vary");
  if (!vary) headers.set("Vary", "Accept-Encoding");
  else if (!/(^|,)\s*accept-encoding\s*(,|$)/i.test(vary)) headers.set("Vary", `${vary}, Accept-Encoding`);
}

function compressStream(body: ReadableStream<Uint8Array>, coding: Coding): ReadableStream<Uint8Array> {
  const compressor = coding === "br" ? zlib.createBrotliCompress(BROTLI_OPTIONS) : zlib.createGzip();
  const source = Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>);
  source.on("error", (error) => compressor.destroy(error));
  return Readable.toWeb(source.pipe(compressor)) as unknown as ReadableStream<Uint8Array>;
}

/** A 304 answers for the representation the client holds: the coded ETag it sent back, if it sent one. */
function notModified(request: Request, response: Response): Response {
  const etag = response.headers.get("etag");
  const held = request.headers.get("if-none-match");
  if (!etag || !held) return response;
  const coded = held
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .find((tag) => CODED_TAG.test(tag) && uncodedETag(tag) === etag);
  if (coded) {
    response.headers.set("ETag", coded);
    addVary(response.headers);
  }
  return response;
}

/**
 * The response as the client asked for it: compressed when it may and should be, else untouched. The
 * checks run synchronously: an answer that is not compressed (most of them: no `Accept-Encoding`, a
 * small body) costs no promise.
 */
export function compressResponse(request: Request, response: Response): Response | Promise<Response> {
  if (response.status === 304) return notModified(request, response);
  if (!isCompressible(response.headers.get("content-type")) || response.headers.has("content-encoding")) return response;
  if (response.status === 204 || response.status === 206) return response;
  addVary(response.headers);
  const coding = negotiateCoding(request.headers.get("accept-encoding"));
  if (!coding || request.headers.has("range")) return response;
  const declared = response.headers.get("content-length");
  const size = declared === null ? undefined : Number(declared);
  if (size !== undefined && size <= COMPRESSION_MIN_BYTES) return response;
  // A stream answering a POST (an import's results) goes out line by line: a compressor would hold the lines back.
  if (size === undefined && isStream(response) && request.method === "POST") return response;
  return compressed(response, coding, size);
}

async function compressed(response: Response, coding: Coding, size: number | undefined): Promise<Response> {
  const init = { status: response.status, statusText: response.statusText, headers: new Headers(response.headers) };
  init.headers.set("Content-Encoding", coding);
  const etag = init.headers.get("etag");
  if (etag) init.headers.set("ETag", codedETag(etag, coding));
  init.headers.delete("Content-Length");
  // HEAD (no body): the header fields a GET would get. The compressed length is not known without
  // compressing, so no Content-Length is sent; `Transfer-Encoding: chunked` (which RFC 9112 §6.1 allows
  // on a HEAD, and which the GET of a streamed answer has) keeps Bun.serve from announcing
  // `Content-Length: 0` for the empty body. The node listener drops the field and sends neither.
  if (response.body === null) {
    init.headers.set("Transfer-Encoding", "chunked");
    return new Response(null, init);
  }
  // Downloads (a known, large size) and NDJSON streams are compressed as they are read; JSON made in memory at once.
  if (size === undefined ? isStream(response) : size > BUFFERED_MAX_BYTES) {
    return new Response(compressStream(response.body, coding), init);
  }
  const head = await readUpTo(response.body, BUFFERED_MAX_BYTES);
  // A body of unknown length that goes on past the limit (a streamed utility output of 50 MB) is compressed
  // as it is read rather than gathered whole first.
  if (head.rest) return new Response(compressStream(head.rest, coding), init);
  const bytes = head.bytes;
  if (bytes.byteLength <= COMPRESSION_MIN_BYTES) {
    return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
  const compressed = coding === "br" ? await brotli(bytes, BROTLI_OPTIONS) : await gzip(bytes);
  init.headers.set("Content-Length", String(compressed.byteLength));
  return new Response(compressed, init);
}

/**
 * The body's bytes when it ends within `limit`; otherwise `rest`, a stream of the whole body again (what
 * was read, then the remainder).
 */
async function readUpTo(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; rest?: undefined } | { rest: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, total) };
    chunks.push(value);
    total += value.byteLength;
    if (total > limit) break;
  }
  const rest = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const chunk = chunks.shift();
      if (chunk) return controller.enqueue(chunk);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { rest };
}
