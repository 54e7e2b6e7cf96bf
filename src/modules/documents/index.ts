/** Documents API (permission `documents`): api.md §4.1 with decisions.md §4. */
import { Elysia, t } from "elysia";
import { requirePrincipal, type AuthPlugin } from "../../http/auth";
import { RawBody, rawBody } from "../../http/body";
import { badRequest } from "../../http/errors";
import { parseJsonBytes } from "../../http/json";
import { contentDisposition } from "./content-disposition";
import { contentETag, ifNoneMatchHits, metadataETag } from "./etag";
import {
  CreateDocumentBody, DocumentResponse, FoldersResponse, IdParams, ListQuery, ListResponse, Problem, UpdateDocumentBody, VersionParams, VersionsQuery, VersionsResponse,
} from "./model";
import { JSON_PATCH, MERGE_PATCH } from "./patch";
import { listVersions, openVersion, patchContent, restoreVersion, versionView } from "./versions";
import {
  createDocument, documentView, getDocument, listDocuments, listLimit, listFolders, openContent, purgeDocument,
  replaceContent, restoreDocument, softDelete, updateMetadata, type DocumentsDeps,
} from "./service";
import type { DocumentRow } from "../../db/schema";
import { Type } from "@sinclair/typebox";

/**
 * Routes whose bodies the handlers read as raw bytes: content is stored as received (a patch's values
 * too), and a metadata update is parsed only once its document was found (404 before 400).
 */
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

/** A download of stored bytes: its ETag, 304 for If-None-Match, the name as attachment. */
function contentResponse(request: Request, headers: Record<string, string | number>, name: string, contentHash: string, content: { size: number; body: Blob }): Response {
  const etag = contentETag(contentHash);
  if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModified(etag, headers);
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

const problems = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, Problem]));
/** A download answers the stored bytes themselves (application/json), as a Response that is not validated. */
const DOWNLOAD = t.Unknown({ description: "the stored JSON bytes, exactly as stored" });

export const documentsModule = (deps: DocumentsDeps & { auth: AuthPlugin }) => {
  const withMetadataETag = (set: { headers: Record<string, unknown> }, row: DocumentRow) => {
    set.headers.ETag = metadataETag(row.revision);
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
      if (ifNoneMatchHits(request.headers.get("if-none-match"), metadataETag(row.revision))) return status(304, undefined);
      return response;
    }, {
      params: IdParams,
      response: { 200: DocumentResponse, 304: t.Void() },
      detail: { summary: "Get document metadata", description: "ETag is the metadata version; If-None-Match gives 304." },
    })
    .get("/documents/:id/content", async ({ principal, params, request, set }) => {
      const { row, content } = await openContent(deps, requirePrincipal(principal).accountId, params.id);
      return contentResponse(request, set.headers as Record<string, string>, row.name, row.contentHash, content);
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
    .patch("/documents/:id/content", async ({ principal, params, body, request, set }) => {
      const row = await patchContent(deps, requirePrincipal(principal).accountId, params.id, request.headers.get("content-type"), () => rawBytes(body), { ifMatch: request.headers.get("if-match") });
      set.headers.ETag = contentETag(row.contentHash);
      return { success: true as const, document: documentView(row) };
    }, {
      params: IdParams,
      response: { 200: DocumentResponse, ...problems(400, 401, 403, 404, 409, 412, 413, 415, 429) },
      detail: {
        summary: "Patch document content (JSON Patch or JSON Merge Patch)",
        description: `The patch is applied to the current content and the result stored as a new version (200, ETag = the new content ETag). \`${JSON_PATCH}\`: an RFC 6902 array of operations (add, remove, replace, move, copy, test), applied atomically. \`${MERGE_PATCH}\`: an RFC 7396 merge patch. The parts the patch does not touch keep their exact bytes; the values it writes are stored as written in the patch. 400 patch_invalid names the operation (errors[].path = "/<index>") for a malformed operation or a path that does not exist; 409 patch_test_failed for a failing test; 412 when If-Match (content ETag) does not match; 413 when the result does not fit the account; 415 unsupported_media_type for any other Content-Type.`,
        requestBody: {
          required: true,
          content: {
            [JSON_PATCH]: { schema: { type: "array", items: { type: "object", required: ["op", "path"], properties: { op: { enum: ["add", "remove", "replace", "move", "copy", "test"] }, path: { type: "string" }, from: { type: "string" }, value: {} } } } },
            [MERGE_PATCH]: { schema: {} },
          },
        },
      },
    })
    .get("/documents/:id/versions", async ({ principal, params, query }) => {
      const { versions, nextCursor } = await listVersions(deps, requirePrincipal(principal).accountId, params.id, { limit: listLimit(query.limit), cursor: query.cursor });
      return { success: true as const, versions: versions.map(versionView), nextCursor };
    }, {
      params: IdParams,
      query: VersionsQuery,
      response: { 200: VersionsResponse, ...problems(400, 401, 403, 404, 429) },
      detail: { summary: "List a document's kept versions", description: "Newest first (the current content is the newest); limit 1–200 (default 50) and cursor as in the document list. The account's maxVersions bounds how many are kept; older ones are dropped." },
    })
    .get("/documents/:id/versions/:version/content", async ({ principal, params, request, set }) => {
      const { document, version, content } = await openVersion(deps, requirePrincipal(principal).accountId, params.id, params.version);
      return contentResponse(request, set.headers as Record<string, string>, document.name, version.contentHash, content);
    }, {
      params: VersionParams,
      response: { 200: DOWNLOAD, 304: t.Void(), ...problems(401, 403, 404, 429) },
      detail: { summary: "Download one version's content", description: "That version's bytes, with its ETag (If-None-Match gives 304) and Content-Disposition like the current download. 404 version_not_found for a version that is not kept." },
    })
    .post("/documents/:id/versions/:version/restore", async ({ principal, params, request, set }) => {
      const row = await restoreVersion(deps, requirePrincipal(principal).accountId, params.id, params.version, { ifMatch: request.headers.get("if-match") });
      set.headers.ETag = contentETag(row.contentHash);
      return { success: true as const, document: documentView(row) };
    }, {
      params: VersionParams,
      response: { 200: DocumentResponse, ...problems(401, 403, 404, 412, 413, 429) },
      detail: { summary: "Restore a version as a new version", description: "The content of that version becomes a new version (history is never rewritten); 200 with the document and its new content ETag. If-Match (content ETag) gives 412; 413 when the copy does not fit the account; 404 version_not_found." },
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
