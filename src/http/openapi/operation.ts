/** What a route declares about itself in its `detail`, through operation(). */
import type { TSchema } from "@sinclair/typebox";
import { ERRORS, type Problems, problems } from "../../core/error-codes";
import { addProblem, type HeaderName, headerRefs, type Json, problemResponse } from "./responses";

export interface OperationOptions {
  /** readable and unique, e.g. createDocument */
  operationId: string;
  summary: string;
  description?: string;
  /**
   * route-specific problem statuses: the codes each carries (their `enum`) and why, as prose around
   * catalogue entries: problems`${ERRORS.document_not_found} (also another account's)`
   */
  errors?: Record<number, Problems>;
  /** headers every response of this status carries */
  headers?: Record<number, HeaderName[]>;
  /** a write a folder's schema in mode warn may warn about: Kiln-Schema-Warnings on this success status, when it did */
  schemaWarnings?: number;
  /** the route takes an Idempotency-Key (http/idempotency.ts): the header, 409, 422, and Idempotent-Replayed on this success status */
  idempotent?: { success: number };
  /** conditional request headers the route honours */
  conditional?: ("If-Match" | "If-None-Match")[];
  /** a download that answers a Range with 206 (Content-Range) or 416, and honours If-Range */
  ranges?: boolean;
  /** the route answers 304 Not Modified (no body) to If-None-Match */
  notModified?: boolean;
  /** a body the handler reads raw, by media type (the route's `body` schema is used otherwise) */
  requestBody?: { description?: string; content: Record<string, MediaSchema> };
  /** success responses the handler builds itself (its Response bypasses `response` schemas) */
  responses?: Record<number, { description: string; content: Record<string, MediaSchema> }>;
}

/**
 * An NDJSON body (application/x-ndjson) of `line` values. The body as a whole is text, which is how a
 * generated client sends and reads it (a string or a stream); each line's schema is the named component
 * the description points to, and `x-itemSchema` (OpenAPI 3.2's `itemSchema`, which the 3.1 schema does
 * not allow on a media type) gives it to tools that read it.
 */
export class NdjsonLines {
  constructor(
    readonly line: TSchema,
    readonly what: string,
  ) {}
}

type MediaSchema = TSchema | Json | NdjsonLines;

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1 to 255 printable ASCII characters (else 400 invalid_idempotency_key). A retry with the same key and body within 24 hours gets the first answer again, with Idempotent-Replayed: true, and nothing is done twice.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
};

const CONDITIONAL = {
  "If-Match": "ETag the resource must still have; otherwise 412 precondition_failed and nothing changes",
  "If-None-Match": "ETags the client already has; a match answers 304 without a body",
};

const RANGE_PARAMETERS = [
  {
    name: "Range",
    in: "header",
    required: false,
    description:
      "One byte range of the stored content: bytes=<first>-<last>, bytes=<first>- or bytes=-<length of the end>. Answered 206 with those bytes and Content-Range, or 416 range_not_satisfiable when it starts past the end; several ranges, another unit or a malformed header get the whole content (200).",
    schema: { type: "string", examples: ["bytes=0-1023"] },
  },
  {
    name: "If-Range",
    in: "header",
    required: false,
    description:
      "The content ETag the client already holds part of: the Range applies only while the content still has this ETag, otherwise the whole content comes (200). A date or a weak tag never matches.",
    schema: { type: "string" },
  },
];

/** The 206 and 416 of a range download (RFC 9110 §14, §15.3.7, §15.5.17). */
function rangeResponses(success: Json | undefined): Json {
  return {
    206: {
      description: "Partial Content: the bytes the Range asked for, exactly as stored (a slice of JSON text, not JSON on its own)",
      headers: {
        ...headerRefs(["Content-Range"], ["Content-Range"]),
        ...(success?.headers as Json),
        ...headerRefs(["Accept-Ranges"]),
      },
      content: { "application/json": { schema: { type: "string", description: "the requested bytes of the stored JSON text" } } },
    },
    416: problemResponse(
      problems`${ERRORS.range_not_satisfiable}: the Range starts past the end of the content; Content-Range (bytes */<size>) gives its size`,
      ["Content-Range"],
      ["Accept-Ranges"],
    ),
  };
}

/** A route's `detail`: standard OpenAPI operation fields, merged by the generator with what it derives. */
export function operation(options: OperationOptions) {
  const responses: Json = {};
  for (const [status, problem] of Object.entries(options.errors ?? {})) {
    responses[status] = problemResponse(problem, Number(status) === 503 ? ["Retry-After"] : []);
  }
  for (const [status, response] of Object.entries(options.responses ?? {})) {
    responses[status] = { description: response.description, content: mediaTypes(response.content) };
  }
  if (options.notModified) responses[304] = { description: "Not Modified: the If-None-Match tag matches; no body" };
  for (const [status, names] of Object.entries(options.headers ?? {})) {
    const response = (responses[status] ??= {}) as Json;
    response.headers = { ...(response.headers as Json), ...headerRefs(names, names) };
  }
  if (options.idempotent) {
    const answers = responses as Record<string, Json>;
    addProblem(answers, 400, problems`${ERRORS.invalid_idempotency_key}: the Idempotency-Key is not 1 to 255 printable ASCII characters`);
    addProblem(answers, 409, problems`${ERRORS.idempotency_in_progress}: a request with this Idempotency-Key is still running`, [
      "Retry-After",
    ]);
    addProblem(
      answers,
      409,
      problems`${ERRORS.idempotency_answer_not_kept}: the first request with this Idempotency-Key was carried out, but its answer was too large to keep`,
    );
    addProblem(
      answers,
      422,
      problems`${ERRORS.idempotency_key_reused}: this Idempotency-Key was used with another request (method, path or body)`,
    );
    const success = (responses[options.idempotent.success] ??= {}) as Json;
    success.headers = { ...(success.headers as Json), ...headerRefs(["Idempotent-Replayed"]) };
  }
  if (options.schemaWarnings !== undefined) {
    const success = (responses[options.schemaWarnings] ??= {}) as Json;
    success.headers = { ...(success.headers as Json), ...headerRefs(["Kiln-Schema-Warnings"]) };
  }
  if (options.ranges) {
    const success = (responses[200] ??= {}) as Json;
    success.headers = { ...(success.headers as Json), ...headerRefs(["Accept-Ranges"]) };
    Object.assign(responses, rangeResponses(success));
  }
  if (options.notModified) (responses[304] as Json).headers = headerRefs(["ETag"], ["ETag"]);
  const parameters = [
    ...(options.conditional ?? []).map((name) => ({
      name,
      in: "header",
      required: false,
      description: CONDITIONAL[name],
      schema: { type: "string" },
    })),
    ...(options.ranges ? RANGE_PARAMETERS : []),
    ...(options.idempotent ? [IDEMPOTENCY_KEY] : []),
  ];
  return {
    operationId: options.operationId,
    summary: options.summary,
    ...(options.description ? { description: options.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(options.requestBody
      ? { requestBody: { required: true, description: options.requestBody.description, content: mediaTypes(options.requestBody.content) } }
      : {}),
    responses,
  } as Record<string, unknown>;
}

export const mediaTypes = (content: Record<string, MediaSchema>) =>
  Object.fromEntries(
    Object.entries(content).map(([type, schema]) => [
      type,
      schema instanceof NdjsonLines
        ? {
            schema: {
              type: "string",
              description: `NDJSON: ${schema.what}, one JSON value per line, each line ended by a line feed. Each line is one ${schema.line.title} (#/components/schemas/${schema.line.title}).`,
            },
            "x-itemSchema": schema.line,
          }
        : { schema },
    ]),
  );
