/** What every documents route group takes, and the small answers they share. */

import { RawBody } from "../../../http/body";
import type { IdempotencyHooks } from "../../../http/idempotency";
import type { AuthPlugin } from "../../auth/index";
import { metadataETag } from "../etag";
import type { SchemaWarnings, WrittenDocument } from "../schema-guard";
import { type DocumentsDeps, documentView } from "../service";

export type DocumentRoutesDeps = DocumentsDeps & { auth: AuthPlugin; idempotency: IdempotencyHooks; importLineMaxBytes: number };

export const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

/** A warn-mode write's warnings for the body, counted in the Kiln-Schema-Warnings header. */
export function schemaWarningsOf(
  set: { headers: Record<string, unknown> },
  row: WrittenDocument,
): { warnings?: SchemaWarnings["warnings"] } {
  if (!row.schemaWarnings) return {};
  set.headers["Kiln-Schema-Warnings"] = String(row.schemaWarnings.warnings.length);
  return { warnings: row.schemaWarnings.warnings };
}

/** An answer already serialised, with the Content-Type Elysia gives the answers it serialises. */
export const jsonAnswer = (text: string) => new Response(text, { headers: { "Content-Type": "application/json;charset=utf-8" } });

export const withMetadataETag = (set: { headers: Record<string, unknown> }, row: WrittenDocument) => {
  set.headers.ETag = metadataETag(row.revision);
  return { success: true as const, document: documentView(row), ...schemaWarningsOf(set, row) };
};
