/** The download response of a document's content, shared by the keyed route and signed links. */
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

/** 200 with the stored bytes (Content-Length, ETag, Content-Disposition), or 304 when If-None-Match hits. */
export function downloadResponse(request: Request, row: DocumentRow, content: OpenedContent, headers: Record<string, unknown>): Response {
  const etag = contentETag(row.contentHash);
  if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModifiedResponse(etag, headers);
  return new Response(content.body, {
    headers: {
      ...stringHeaders(headers),
      "Content-Type": "application/json",
      "Content-Length": String(content.size),
      "Content-Disposition": contentDisposition(row.name),
      ETag: etag,
    },
  });
}
