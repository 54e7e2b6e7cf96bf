/** What every documents route group takes, and the small answers they share. */

import type { DocumentRow } from "../../../db/schema";
import { RawBody } from "../../../http/body";
import type { IdempotencyHooks } from "../../../http/idempotency";
import type { AuthPlugin } from "../../auth/index";
import { metadataETag } from "../etag";
import { type DocumentsDeps, documentView } from "../service";

export type DocumentRoutesDeps = DocumentsDeps & { auth: AuthPlugin; idempotency: IdempotencyHooks; importLineMaxBytes: number };

export const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

export const withMetadataETag = (set: { headers: Record<string, unknown> }, row: DocumentRow) => {
  set.headers.ETag = metadataETag(row.revision);
  return { success: true as const, document: documentView(row) };
};
