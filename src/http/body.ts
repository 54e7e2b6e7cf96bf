/**
 * The one body parser. It reads the request stream itself, counting bytes, so an oversized body is
 * refused by the app (problem+json) rather than by Bun, and never buffered past its limit. Parsing
 * never throws: a bad body becomes a BodyProblem that is thrown only after authentication (401 comes
 * before 400 and 413, docs/api.md "Order of checks"). The exact bytes stay reachable through rawBody(request), for
 * lossless document content and for utility inputs that travel to workers unparsed.
 */
import { Elysia } from "elysia";
import { ERRORS } from "../core/error-codes";
import { HttpError, httpError } from "../core/errors";
import { type ParsedJson, parseJsonBytes } from "../core/json/parse";
import { requestState } from "../server/request-state";

export class BodyProblem {
  constructor(readonly error: HttpError) {}
}

/**
 * The body of a route that asked for raw bytes. An oversized body is kept as its problem and thrown
 * only when the handler reads `bytes`, so the handler's own 404 (unknown utility or document) comes first.
 */
export class RawBody {
  constructor(private readonly content: Uint8Array | HttpError) {}

  get bytes(): Uint8Array {
    if (this.content instanceof HttpError) throw this.content;
    return this.content;
  }
}

/**
 * The body of a route that reads the request stream itself (an NDJSON import of any size): the parser
 * leaves the stream untouched for the handler.
 */
export class StreamedBody {}

/** Parsed JSON, boxed so that a body of `null` is not mistaken by Elysia for "no parser answered". */
class ParsedBody {
  constructor(readonly value: unknown) {}
}

declare module "../server/request-state" {
  interface RequestState {
    /** the body's bytes as read by the parser, for the routes that store or hash them */
    rawBody?: Uint8Array;
  }
}

const printAsObject = () => "[object]";

/**
 * A member named `toString` or `valueOf` that is not a function (`{"toString": 1}`) makes JavaScript's
 * string conversion throw, and Elysia formats offending values into its validation messages: a 500.
 * Such objects get a non-enumerable Symbol.toPrimitive, which the conversion consults first and which
 * JSON, Object.keys and schema checks never see. The walk runs only when the bytes mention those
 * names or hold a \u escape (which could spell them), so ordinary bodies pay one native byte search.
 */
function makePrintable(bytes: Uint8Array, value: unknown): void {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (text.indexOf("toString") === -1 && text.indexOf("valueOf") === -1 && text.indexOf("\\u") === -1) return;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item !== "object") continue;
    if (Array.isArray(item)) {
      for (const element of item) pending.push(element);
      continue;
    }
    if (Object.hasOwn(item, "toString") || Object.hasOwn(item, "valueOf")) {
      Object.defineProperty(item, Symbol.toPrimitive, { value: printAsObject, enumerable: false });
    }
    for (const member of Object.values(item)) pending.push(member);
  }
}

/**
 * A request body parsed for a route schema that Elysia checks: every body that reaches Elysia's validator
 * goes through here (the global parser, and a raw route that parses its bytes in its own transform).
 */
export function parseRequestJson(bytes: Uint8Array): ParsedJson {
  const parsed = parseJsonBytes(bytes);
  if (parsed.ok) makePrintable(bytes, parsed.value);
  return parsed;
}

export function rawBody(request: Request): Uint8Array | undefined {
  return requestState(request).rawBody;
}

export interface BodyLimit {
  bytes: number;
  tooLarge: (limit: number) => HttpError;
}

export async function readLimited(request: Request, limit: number): Promise<Uint8Array | "too_large"> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) return "too_large";
  if (!request.body) return new Uint8Array(0);
  if (declared !== null && /^[0-9]+$/.test(declared)) {
    // A declared length within the limit: Bun reads the body natively into one buffer, far cheaper
    // than a stream reader per request. HTTP framing holds a real request to its Content-Length; one
    // built in-process may still lie, hence the check after.
    const bytes = await request.bytes();
    return bytes.byteLength > limit ? "too_large" : bytes;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return "too_large";
    }
    chunks.push(value);
  }
  return joinedBytes(chunks, total);
}

/** The parts as one array of `size` bytes; a single part is returned as it is, not copied. */
export function joinedBytes(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

export interface BodyParserOptions {
  /** the body limit of a route (its path pattern, as Elysia names it) */
  limitFor(route: string): BodyLimit;
  /** routes whose handlers take the raw bytes (a RawBody) instead of parsed JSON */
  rawRoutes: ReadonlySet<string>;
  /** routes whose handlers read request.body incrementally (a StreamedBody): nothing is buffered */
  streamedRoutes?: ReadonlySet<string>;
  /** the request's authorisation (memoised): a refused request's body is never read */
  authorize(request: Request, path: string): Promise<unknown>;
}

/** Media types whose bodies are not JSON text: refused (415) rather than misread as malformed JSON. */
const FORM_TYPES = /^\s*(multipart\/|application\/x-www-form-urlencoded)/i;

/** A body Kiln cannot read as JSON text: a Content-Encoding (gzip, br, …) or a form media type. */
function unsupportedBody(request: Request): HttpError | undefined {
  const encoding = request.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") {
    return httpError(ERRORS.unsupported_media_type, `Content-Encoding '${encoding}' is not accepted; send the body uncompressed`);
  }
  const type = request.headers.get("content-type");
  if (type !== null && FORM_TYPES.test(type)) {
    return httpError(
      ERRORS.unsupported_media_type,
      `Content-Type '${type.split(";")[0].trim()}' is not accepted; send JSON (application/json)`,
    );
  }
  return undefined;
}

export const bodyParser = (options: BodyParserOptions) =>
  new Elysia({ name: "kiln.body" }).onParse({ as: "global" }, async ({ request, route, path }) => {
    // 401/429/403 are thrown by the route's authentication hook, from the same decision.
    if (
      !(await options.authorize(request, path).then(
        () => true,
        () => false,
      ))
    )
      return new ParsedBody(undefined);
    const raw = options.rawRoutes.has(route);
    const unsupported = unsupportedBody(request);
    if (unsupported) {
      await request.body?.cancel().catch(() => {});
      return raw ? new RawBody(unsupported) : new BodyProblem(unsupported);
    }
    if (options.streamedRoutes?.has(route)) return new StreamedBody();
    const limit = options.limitFor(route);
    const bytes = await readLimited(request, limit.bytes);
    if (bytes === "too_large") return raw ? new RawBody(limit.tooLarge(limit.bytes)) : new BodyProblem(limit.tooLarge(limit.bytes));
    requestState(request).rawBody = bytes;
    if (raw) return new RawBody(bytes);
    if (bytes.byteLength === 0) return new ParsedBody(undefined);
    const parsed = parseRequestJson(bytes);
    return parsed.ok ? new ParsedBody(parsed.value) : new BodyProblem(httpError(ERRORS.malformed_json, parsed.message));
  });

/**
 * Called after authentication: throws a deferred body problem, or unwraps the parsed value.
 * A request refused for its key, permission, rate or declared size is answered at once, without waiting
 * for or reading the body. With `Expect: 100-continue`, Bun.serve (the default listener) sends the 100
 * before the app sees the request; HTTP_LISTENER=node sends it on the body's first read, which comes
 * only after those checks (src/server/node-listener.ts).
 */
export function settleBody(context: { body: unknown }): void {
  const body = context.body;
  if (body instanceof BodyProblem) throw body.error;
  if (body instanceof ParsedBody) context.body = body.value;
}
