/** Documents API (permission `documents`): api.md §4.1 with decisions.md §4. */
import { Elysia, t } from "elysia";
import { requirePrincipal, type AuthPlugin } from "../../http/auth";
import type { IdempotencyPlugin } from "../../http/idempotency";
import { RawBody, rawBody } from "../../http/body";
import { badRequest, HttpError } from "../../http/errors";
import { parseJsonBytes } from "../../http/json";
import { contentDisposition } from "./content-disposition";
import { contentETag, ifNoneMatchHits, metadataETag } from "./etag";
import { CreateDocumentBody, DocumentResponse, ExportQuery, FoldersResponse, IdParams, ListQuery, ListResponse, UpdateDocumentBody } from "./model";
import {
  createDocument, documentView, getDocument, listDocuments, listLimit, listFolders, openContent, purgeDocument,
  replaceContent, restoreDocument, softDelete, updateMetadata, type DocumentsDeps,
} from "./service";
import type { DocumentRow } from "../../db/schema";
import { Type, type TSchema } from "@sinclair/typebox";
import { exportDocuments, importDocuments } from "./transfer";

/** The import route as Elysia names it: its body is streamed, never buffered (see app.ts's body parser). */
export const IMPORT_ROUTE = "/api/v1/import";

/** Routes whose bodies the handlers read as raw bytes: content is stored as received, and a metadata update is parsed only once its document was found (404 before 400). */
export const DOCUMENT_RAW_ROUTES = ["/api/v1/documents/:id", "/api/v1/documents/:id/content"] as const;

const Deleted = t.Object({ success: t.Literal(true), deleted: t.Literal(true), purgeAt: Type.Integer({ description: "epoch ms when the sweeper purges it" }) });
const Purged = t.Object({ success: t.Literal(true), deleted: t.Literal(true), permanent: t.Literal(true) });
const ContentReplaced = t.Object({ success: t.Literal(true), fileSize: Type.Integer() });

function notModified(etag: string, headers: Record<string, string | number>): Response {
  return new Response(null, { status: 304, headers: { ...stringHeaders(headers), ETag: etag } });
}

function stringHeaders(headers: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));
}

const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

/** A line of an export or an import (OpenAPI). */
const TransferLine = t.Object({
  document: t.Object({ name: t.String(), description: t.Optional(t.Union([t.String(), t.Null()])), tags: t.Optional(t.Array(t.String())), folder: t.Optional(t.Union([t.String(), t.Null()])) }, { description: "the document's metadata (an export gives every field of a document; an import reads name, description, tags and folder only)" }),
  content: t.Optional(t.Unknown({ description: "the content, embedded byte for byte" })),
  contentText: t.Optional(t.String({ description: "instead of content, for content whose text holds line breaks: the text as a JSON string" })),
});
const ImportResultLine = t.Union([
  t.Object({ line: Type.Integer(), id: t.String() }),
  t.Object({ line: Type.Integer(), error: t.Object({ code: t.String(), detail: t.String() }) }),
]);
const ndjson = (schema: TSchema, description: string) => ({ description, content: { "application/x-ndjson": { schema: schema as object } } });

export const documentsModule = (deps: DocumentsDeps & { auth: AuthPlugin; idempotency: IdempotencyPlugin; importLineMaxBytes: number }) => {
  const withMetadataETag = (set: { headers: Record<string, unknown> }, row: DocumentRow) => {
    set.headers.ETag = metadataETag(row.version);
    return { success: true as const, document: documentView(row) };
  };

  return new Elysia({ name: "kiln.documents", prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
    .use(deps.idempotency)
    .get("/documents", async ({ principal, query }) => {
      const { documents, nextCursor } = await listDocuments(deps, requirePrincipal(principal).accountId, {
        limit: listLimit(query.limit),
        cursor: query.cursor,
        folder: query.folder,
        deleted: query.deleted === "true",
      });
      return { success: true as const, documents: documents.map(documentView), nextCursor };
    }, {
      query: ListQuery,
      response: { 200: ListResponse },
      detail: { summary: "List documents", description: "Newest first. Pass nextCursor as cursor for the next page; null means no more. `deleted=true` lists the caller's soft-deleted documents instead." },
    })
    .post("/documents", async ({ principal, body, request, set }) => {
      const row = await createDocument(deps, requirePrincipal(principal).accountId, body, rawBody(request));
      set.status = 201;
      set.headers.Location = `/api/v1/documents/${row.id}`;
      return withMetadataETag(set, row);
    }, {
      idempotent: true,
      body: CreateDocumentBody,
      response: { 201: DocumentResponse },
      detail: { summary: "Create a document", description: "Exactly one of content (stored exactly as written in the request) and contentText (JSON text, stored byte for byte). 413 document_too_large / storage_limit_exceeded when it does not fit the account." },
    })
    .get("/documents/:id", async ({ principal, params, request, set, status }) => {
      const row = await getDocument(deps, requirePrincipal(principal).accountId, params.id);
      const response = withMetadataETag(set, row);
      if (ifNoneMatchHits(request.headers.get("if-none-match"), metadataETag(row.version))) return status(304, undefined);
      return response;
    }, {
      params: IdParams,
      response: { 200: DocumentResponse, 304: t.Void() },
      detail: { summary: "Get document metadata", description: "ETag is the metadata version; If-None-Match gives 304." },
    })
    .get("/documents/:id/content", async ({ principal, params, request, set }) => {
      const { row, content } = await openContent(deps, requirePrincipal(principal).accountId, params.id);
      const etag = contentETag(row.contentHash);
      const headers = set.headers as Record<string, string>;
      if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModified(etag, headers);
      return new Response(content.body, {
        headers: {
          ...stringHeaders(headers),
          "Content-Type": "application/json",
          "Content-Length": String(content.size),
          "Content-Disposition": contentDisposition(row.name),
          ETag: etag,
        },
      });
    }, {
      params: IdParams,
      detail: { summary: "Download document content", description: "The stored bytes, streamed from disk, with Content-Type application/json, Content-Length and Content-Disposition: attachment. ETag is the content hash; If-None-Match gives 304." },
    })
    .put("/documents/:id", async ({ principal, params, body, request, set }) => {
      const row = await updateMetadata(deps, requirePrincipal(principal).accountId, params.id, body, { ifMatch: request.headers.get("if-match") });
      return withMetadataETag(set, row);
    }, {
      params: IdParams,
      // The body arrives raw (DOCUMENT_RAW_ROUTES): 404 is decided before the body is looked at.
      async transform(context) {
        const { principal, params } = context as unknown as { principal: Parameters<typeof requirePrincipal>[0]; params: { id: string } };
        await getDocument(deps, requirePrincipal(principal).accountId, params.id);
        const bytes = rawBytes(context.body);
        if (bytes.byteLength === 0) throw badRequest("body_required", "A JSON request body is required");
        const parsed = parseJsonBytes(bytes);
        if (!parsed.ok) throw badRequest("malformed_json", parsed.message);
        context.body = parsed.value as typeof context.body;
      },
      body: UpdateDocumentBody,
      response: { 200: DocumentResponse },
      detail: { summary: "Update document metadata", description: "At least one field. Tags are replaced, not merged. If-Match (metadata ETag) gives 412 when it does not match." },
    })
    .put("/documents/:id/content", async ({ principal, params, body, request, set }) => {
      const row = await replaceContent(deps, requirePrincipal(principal).accountId, params.id, rawBytes(body), { ifMatch: request.headers.get("if-match") });
      set.headers.ETag = contentETag(row.contentHash);
      return { success: true as const, fileSize: row.fileSize };
    }, {
      params: IdParams,
      response: { 200: ContentReplaced },
      detail: { summary: "Replace document content", description: "The body is the new JSON value itself, stored byte for byte. If-Match (content ETag) gives 412 when it does not match. 413 document_too_large / storage_limit_exceeded." },
    })
    .delete("/documents/:id", async ({ principal, params, request }) => {
      const row = await softDelete(deps, requirePrincipal(principal).accountId, params.id, { ifMatch: request.headers.get("if-match") });
      return { success: true as const, deleted: true as const, purgeAt: row.purgeAt! };
    }, {
      params: IdParams,
      response: { 200: Deleted },
      detail: { summary: "Soft-delete a document", description: "It stays restorable (and counts towards storage) until purgeAt. If-Match (metadata ETag) gives 412 when it does not match." },
    })
    .post("/documents/:id/purge", async ({ principal, params }) => {
      await purgeDocument(deps, requirePrincipal(principal).accountId, params.id);
      return { success: true as const, deleted: true as const, permanent: true as const };
    }, {
      params: IdParams,
      response: { 200: Purged },
      detail: { summary: "Purge a soft-deleted document", description: "Permanent; releases its storage. 409 document_not_deleted for an active document." },
    })
    .post("/documents/:id/restore", async ({ principal, params, set }) => {
      const row = await restoreDocument(deps, requirePrincipal(principal).accountId, params.id);
      return withMetadataETag(set, row);
    }, {
      params: IdParams,
      response: { 200: DocumentResponse },
      detail: { summary: "Restore a soft-deleted document", description: "409 document_not_deleted for an active document." },
    })
    .get("/export", ({ principal, query, set }) => {
      const stream = exportDocuments(deps, requirePrincipal(principal).accountId, { folder: query.folder, deleted: query.deleted === "true" });
      return new Response(stream, { headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" } });
    }, {
      query: ExportQuery,
      detail: {
        summary: "Export documents as NDJSON",
        description: "One line per document, oldest first: {\"document\": {metadata}, \"content\": <the stored JSON text, byte for byte>} (content with line breaks comes as contentText). Streamed: memory stays flat whatever the number of documents.",
        responses: { 200: ndjson(TransferLine, "One line per document") },
      },
    })
    .post("/import", ({ principal, request, set }) => {
      const accountId = requirePrincipal(principal).accountId;
      const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
      if (type !== "application/x-ndjson") throw new HttpError(415, "unsupported_media_type", "The import body must be NDJSON: Content-Type: application/x-ndjson");
      const results = importDocuments(deps, accountId, request.body, deps.importLineMaxBytes);
      return new Response(results, { headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" } });
    }, {
      detail: {
        summary: "Import documents from NDJSON",
        description: "The export's line format; of document, only name, description, tags and folder are read. Each line is created on its own (quotas per line) and answered by one result line, streamed as it is stored: {\"line\": n, \"id\"} or {\"line\": n, \"error\": {code, detail}}. Blank lines are skipped. 415 unsupported_media_type for another Content-Type.",
        requestBody: { required: true, ...ndjson(TransferLine, "One document per line") },
        responses: {
          200: ndjson(ImportResultLine, "One result per input line"),
          415: { description: "unsupported_media_type: the body is not application/x-ndjson", content: { "application/problem+json": { schema: { type: "object" } } } },
        },
      },
    })
    .get("/folders", async ({ principal }) => ({ success: true as const, folders: await listFolders(deps, requirePrincipal(principal).accountId) }), {
      response: { 200: FoldersResponse },
      detail: { summary: "List folders with their document counts", description: "Every folder (and ancestor) a document was ever filed in, by path; documentCount counts active documents directly in it." },
    });
};
