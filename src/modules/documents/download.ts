/** The download responses of stored content, shared by the keyed routes (current and version) and signed links. */
import type { DocumentRow } from "../../db/schema";
import type { OpenedContent } from "../../storage/content-store";
import { contentDisposition } from "./content-disposition";
import { contentETag, ifNoneMatchHits } from "./etag";

export function stringHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}

export function notModifiedResponse(etag: string, headers: Record<string, unknown>): Response {
  return new Response(null, { status: 304, headers: { ...stringHeaders(headers), ETag: etag } });
}

/** 200 with stored bytes (Content-Length, ETag), `name` as the attachment's file name. */
export function contentResponse(headers: Record<string, unknown>, name: string, etag: string, content: OpenedContent): Response {
  return new Response(content.body, {
    headers: {
      ...stringHeaders(headers),
      "Content-Type": "application/json",
      "Content-Length": String(content.size),
      "Content-Disposition": contentDisposition(name),
      ETag: etag,
    },
  });
}

/** A document's current content: 200 with its bytes, or 304 when If-None-Match hits. */
export function downloadResponse(request: Request, row: DocumentRow, content: OpenedContent, headers: Record<string, unknown>): Response {
  const etag = contentETag(row.contentHash);
  if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModifiedResponse(etag, headers);
  return contentResponse(headers, row.name, etag, content);
}
