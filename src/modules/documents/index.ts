/** Documents API (permission `documents`): api.md §4.1 with decisions.md §4. */
import { Elysia, t } from "elysia";
import { requirePrincipal, type AuthPlugin } from "../../http/auth";
import { RawBody, rawBody } from "../../http/body";
import { badRequest } from "../../http/errors";
import { parseJsonBytes } from "../../http/json";
import { downloadResponse } from "./download";
import { contentETag, ifNoneMatchHits, metadataETag } from "./etag";
import { CreateDocumentBody, DocumentResponse, FoldersResponse, IdParams, ListQuery, ListResponse, UpdateDocumentBody } from "./model";
import {
  createDocument, documentView, getDocument, listDocuments, listLimit, listFolders, openContent, purgeDocument,
  replaceContent, restoreDocument, softDelete, updateMetadata, type DocumentsDeps,
} from "./service";
import type { DocumentRow } from "../../db/schema";
import { Type } from "@sinclair/typebox";

/** Routes whose bodies the handlers read as raw bytes: content is stored as received, and a metadata update is parsed only once its document was found (404 before 400). */
export const DOCUMENT_RAW_ROUTES = ["/api/v1/documents/:id", "/api/v1/documents/:id/content"] as const;

const Deleted = t.Object({ success: t.Literal(true), deleted: t.Literal(true), purgeAt: Type.Integer({ description: "epoch ms when the sweeper purges it" }) });
const Purged = t.Object({ success: t.Literal(true), deleted: t.Literal(true), permanent: t.Literal(true) });
const ContentReplaced = t.Object({ success: t.Literal(true), fileSize: Type.Integer() });

const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

export const documentsModule = (deps: DocumentsDeps & { auth: AuthPlugin }) => {
  const withMetadataETag = (set: { headers: Record<string, unknown> }, row: DocumentRow) => {
    set.headers.ETag = metadataETag(row.version);
    return { success: true as const, document: documentView(row) };
  };

  return new Elysia({ name: "kiln.documents", prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
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
      return downloadResponse(request, row, content, set.headers);
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
    .get("/folders", async ({ principal }) => ({ success: true as const, folders: await listFolders(deps, requirePrincipal(principal).accountId) }), {
      response: { 200: FoldersResponse },
      detail: { summary: "List folders with their document counts", description: "Every folder (and ancestor) a document was ever filed in, by path; documentCount counts active documents directly in it." },
    });
};
