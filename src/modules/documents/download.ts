/** The download responses of stored content, shared by the keyed routes (current and version) and signed links. */

import { ERRORS } from "../../core/error-codes";
import { type HttpError, httpError } from "../../core/errors";
import type { DocumentRow } from "../../db/schema";
import { requestedRange } from "../../server/ranges";
import type { OpenedContent } from "../../storage/content-store";
import { contentDisposition } from "./content-disposition";
import { contentETag, ifNoneMatchHits } from "./etag";

export function stringHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}

export function notModifiedResponse(etag: string, headers: Record<string, unknown>): Response {
  return new Response(null, { status: 304, headers: { ...stringHeaders(headers), ETag: etag } });
}

/** 416: the Range starts past the end of the content; `Content-Range: bytes *\/<size>` says how large it is. */
function rangeNotSatisfiable(size: number): HttpError {
  return httpError(
    ERRORS.range_not_satisfiable,
    `The requested range starts past the end of the content (${size} bytes): ask for bytes 0 to ${size - 1}`,
    { headers: { "Content-Range": `bytes */${size}`, "Accept-Ranges": "bytes" } },
  );
}

/**
 * 200 with stored bytes (Content-Length, ETag, Accept-Ranges), `name` as the attachment's file name; or, for a GET
 * with a `Range` of one byte range (and an `If-Range` that still matches, if any), 206 with that slice
 * and `Content-Range`, or 416 problem+json for a range past the end. Kiln answers ranges itself, the
 * same way on both listeners and for every content store (a file, a spooled S3 object or content held
 * in memory); the rules are Bun.serve's (src/server/ranges.ts), so Bun never re-slices the answer.
 */
export function contentResponse(
  request: Request,
  headers: Record<string, unknown>,
  name: string,
  etag: string,
  content: OpenedContent,
): Response {
  const shared = {
    ...stringHeaders(headers),
    "Content-Type": "application/json",
    "Content-Disposition": contentDisposition(name),
    "Accept-Ranges": "bytes",
    ETag: etag,
  };
  const range = requestedRange(request, content.size, etag);
  if (range === undefined) return new Response(content.body, { headers: { ...shared, "Content-Length": String(content.size) } });
  if (range === "unsatisfiable") throw rangeNotSatisfiable(content.size);
  return new Response(content.body.slice(range.start, range.end + 1), {
    status: 206,
    headers: {
      ...shared,
      "Content-Range": `bytes ${range.start}-${range.end}/${content.size}`,
      "Content-Length": String(range.end - range.start + 1),
    },
  });
}

/** A document's current content: 200 (or 206/416 for a Range) with its bytes, or 304 when If-None-Match hits. */
export function downloadResponse(request: Request, row: DocumentRow, content: OpenedContent, headers: Record<string, unknown>): Response {
  const etag = contentETag(row.contentHash);
  if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModifiedResponse(etag, headers);
  return contentResponse(request, headers, row.name, etag, content);
}
