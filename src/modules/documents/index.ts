/** Documents API (permission `documents`), as docs/api.md describes it. */
import { Elysia, t } from "elysia";
import { requirePrincipal, type AuthPlugin } from "../auth/index";
import type { IdempotencyHooks } from "../../http/idempotency";
import { RawBody, rawBody } from "../../http/body";
import { httpError } from "../../core/errors";
import { ERRORS, problems } from "../../core/error-codes";
import { parseJsonBytes } from "../../core/json/parse";
import { contentResponse, downloadResponse, notModifiedResponse, stringHeaders } from "./download";
import { contentETag, ifNoneMatchHits, metadataETag } from "./etag";
import {
  CreateDocumentBody,
  DocumentResponse,
  DocumentView,
  ExportQuery,
  FoldersResponse,
  IdParams,
  JsonPatchDocument,
  LIMIT_PARAMETER,
  MergePatchDocument,
  ListQuery,
  ListResponse,
  UpdateDocumentBody,
  VersionParams,
  VersionsQuery,
  VersionsResponse,
} from "./model";
import { JSON_PATCH, MERGE_PATCH } from "../../core/json/patch";
import { findVersion, listVersions, openVersionContent, patchContent, restoreVersion, versionView } from "./versions";
import {
  createDocument,
  documentView,
  getDocument,
  listDocuments,
  listLimit,
  listFolders,
  openContent,
  purgeDocument,
  replaceContent,
  restoreDocument,
  softDelete,
  updateMetadata,
  type DocumentsDeps,
} from "./service";
import type { DocumentRow } from "../../db/schema";
import { Type } from "@sinclair/typebox";
import { NdjsonLines, operation } from "../../http/openapi";
import { exportDocuments, importDocuments } from "./transfer";

/** The import route as Elysia names it: its body is streamed, never buffered (see app.ts's body parser). */
export const IMPORT_ROUTE = "/api/v1/import";

/**
 * Routes whose bodies the handlers read as raw bytes: content is stored as received (a patch's values
 * too), and a metadata update is parsed only once its document was found (404 before 400).
 */
export const DOCUMENT_RAW_ROUTES = ["/api/v1/documents/:id", "/api/v1/documents/:id/content"] as const;

const Deleted = t.Object(
  { success: t.Literal(true), deleted: t.Literal(true), purgeAt: Type.Integer({ description: "epoch ms when the sweeper purges it" }) },
  { title: "DeletedDocument" },
);
const Purged = t.Object({ success: t.Literal(true), deleted: t.Literal(true), permanent: t.Literal(true) });
const ContentReplaced = t.Object({ success: t.Literal(true), fileSize: Type.Integer() });

const rawBytes = (body: unknown): Uint8Array => (body instanceof RawBody ? body.bytes : new Uint8Array(0));

/** A line of an export, and of an import (whose `document` may hold more fields: they are ignored). */
const contentMembers = {
  content: t.Optional(t.Unknown({ description: "the content, embedded byte for byte" })),
  contentText: t.Optional(
    t.String({ description: "instead of content, for content whose text holds line breaks: the text as a JSON string" }),
  ),
};
const ExportLine = t.Object({ document: DocumentView, ...contentMembers }, { title: "ExportLine" });
const ImportLine = t.Object(
  {
    document: t.Object(
      {
        name: t.String(),
        description: t.Optional(t.Union([t.String(), t.Null()])),
        tags: t.Optional(t.Array(t.String())),
        folder: t.Optional(t.Union([t.String(), t.Null()])),
      },
      {
        additionalProperties: true,
        description: "name, description, tags and folder are read; other fields (an export's id, sizes, times) are ignored",
      },
    ),
    ...contentMembers,
  },
  { title: "ImportLine" },
);
const ImportResult = t.Union(
  [
    t.Object({ line: Type.Integer({ description: "the input line's number, from 1" }), id: t.String() }),
    t.Object({ line: Type.Integer(), error: t.Object({ code: t.String(), detail: t.String() }) }),
  ],
  { title: "ImportResult" },
);

export const documentsModule = (deps: DocumentsDeps & { auth: AuthPlugin; idempotency: IdempotencyHooks; importLineMaxBytes: number }) => {
  const withMetadataETag = (set: { headers: Record<string, unknown> }, row: DocumentRow) => {
    set.headers.ETag = metadataETag(row.revision);
    return { success: true as const, document: documentView(row) };
  };

  return new Elysia({ name: "kiln.documents", prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
    .get(
      "/documents",
      async ({ principal, query }) => {
        const { documents, nextCursor } = await listDocuments(deps, requirePrincipal(principal).accountId, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
          folder: query.folder,
          recursive: query.recursive === "true",
          deleted: query.deleted === "true",
        });
        return { success: true as const, documents: documents.map(documentView), nextCursor };
      },
      {
        query: ListQuery,
        response: { 200: ListResponse },
        detail: {
          ...operation({
            operationId: "listDocuments",
            summary: "List documents",
            description:
              "Newest first. Pass nextCursor as cursor for the next page; null means no more. `folder` lists that folder's documents only; with `recursive=true`, its subfolders' too. `deleted=true` lists the caller's soft-deleted documents instead.",
            errors: {
              400: problems`${ERRORS.validation_failed} (limit, folder, recursive, deleted, unknown query parameter) or ${ERRORS.invalid_cursor}`,
            },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .post(
      "/documents",
      async ({ principal, body, request, set }) => {
        const row = await createDocument(deps, requirePrincipal(principal).accountId, body, rawBody(request));
        set.status = 201;
        set.headers.Location = `/api/v1/documents/${row.id}`;
        return withMetadataETag(set, row);
      },
      {
        ...deps.idempotency,
        body: CreateDocumentBody,
        response: { 201: DocumentResponse },
        detail: operation({
          operationId: "createDocument",
          summary: "Create a document",
          description:
            "Exactly one of content (stored exactly as written in the request) and contentText (JSON text, stored byte for byte).",
          errors: {
            413: problems`${ERRORS.document_too_large} (over the account's maximum document size) or ${ERRORS.storage_limit_exceeded}`,
            503: problems`${ERRORS.content_store_unavailable}: the content store cannot be reached; nothing was stored (Retry-After)`,
            507: problems`${ERRORS.insufficient_storage}: the content store has no room (a full disk); nothing was stored`,
          },
          headers: { 201: ["Location", "ETag"] },
          idempotent: { success: 201 },
        }),
      },
    )
    .get(
      "/documents/:id",
      async ({ principal, params, request, set, status }) => {
        const row = await getDocument(deps, requirePrincipal(principal).accountId, params.id);
        const response = withMetadataETag(set, row);
        if (ifNoneMatchHits(request.headers.get("if-none-match"), metadataETag(row.revision))) return status(304, undefined);
        return response;
      },
      {
        params: IdParams,
        response: { 200: DocumentResponse, 304: t.Void() },
        detail: operation({
          operationId: "getDocument",
          summary: "Get document metadata",
          description: "ETag is the metadata version; If-None-Match gives 304.",
          errors: { 404: problems`${ERRORS.document_not_found}` },
          headers: { 200: ["ETag"] },
          conditional: ["If-None-Match"],
          notModified: true,
        }),
      },
    )
    .get(
      "/documents/:id/content",
      async ({ principal, params, request, set }) => {
        const accountId = requirePrincipal(principal).accountId;
        const ifNoneMatch = request.headers.get("if-none-match");
        // A conditional request is answered from the row, without reading the content from the store.
        if (ifNoneMatch !== null) {
          const etag = contentETag((await getDocument(deps, accountId, params.id)).contentHash);
          if (ifNoneMatchHits(ifNoneMatch, etag)) return notModifiedResponse(etag, set.headers);
        }
        const { row, content } = await openContent(deps, accountId, params.id);
        return downloadResponse(request, row, content, set.headers);
      },
      {
        params: IdParams,
        // Documents the body for typed clients; the handler streams a Response, which Elysia does not re-validate.
        response: { 200: t.Unknown({ description: "any JSON value" }), 304: t.Void() },
        detail: operation({
          operationId: "downloadDocumentContent",
          summary: "Download document content",
          description:
            "The stored bytes, streamed from the content store, with Content-Length and Content-Disposition: attachment. ETag is the content hash; If-None-Match gives 304 without reading the content.",
          errors: {
            404: problems`${ERRORS.document_not_found}`,
            500: problems`${ERRORS.content_missing}: the content is missing from the content store (removed behind Kiln's back; logged), or ${ERRORS.internal_error}`,
            503: problems`${ERRORS.content_store_unavailable}: the content store cannot be reached (Retry-After)`,
          },
          headers: { 200: ["ETag", "Content-Disposition"] },
          conditional: ["If-None-Match"],
          notModified: true,
          ranges: true,
        }),
      },
    )
    .put(
      "/documents/:id",
      async ({ principal, params, body, request, set }) => {
        const row = await updateMetadata(deps, requirePrincipal(principal).accountId, params.id, body, {
          ifMatch: request.headers.get("if-match"),
        });
        return withMetadataETag(set, row);
      },
      {
        params: IdParams,
        // The body arrives raw (DOCUMENT_RAW_ROUTES): 404 is decided before the body is looked at.
        async transform(context) {
          const { principal, params } = context as unknown as { principal: Parameters<typeof requirePrincipal>[0]; params: { id: string } };
          await getDocument(deps, requirePrincipal(principal).accountId, params.id);
          const bytes = rawBytes(context.body);
          if (bytes.byteLength === 0) throw httpError(ERRORS.body_required, "A JSON request body is required");
          const parsed = parseJsonBytes(bytes);
          if (!parsed.ok) throw httpError(ERRORS.malformed_json, parsed.message);
          context.body = parsed.value as typeof context.body;
        },
        body: UpdateDocumentBody,
        response: { 200: DocumentResponse },
        detail: operation({
          operationId: "updateDocument",
          summary: "Update document metadata",
          description: "At least one field. Tags are replaced, not merged.",
          requestBody: { content: { "application/json": UpdateDocumentBody } },
          errors: {
            404: problems`${ERRORS.document_not_found}`,
            412: problems`${ERRORS.precondition_failed}: If-Match is not the current metadata ETag`,
          },
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    )
    .put(
      "/documents/:id/content",
      async ({ principal, params, body, request, set }) => {
        const row = await replaceContent(deps, requirePrincipal(principal).accountId, params.id, rawBytes(body), {
          ifMatch: request.headers.get("if-match"),
        });
        set.headers.ETag = contentETag(row.contentHash);
        return { success: true as const, fileSize: row.fileSize };
      },
      {
        params: IdParams,
        response: { 200: ContentReplaced },
        detail: operation({
          operationId: "replaceDocumentContent",
          summary: "Replace document content",
          description: "The body is the new JSON value itself, stored byte for byte.",
          requestBody: { description: "any JSON value", content: { "application/json": {} } },
          errors: {
            404: problems`${ERRORS.document_not_found}`,
            412: problems`${ERRORS.precondition_failed}: If-Match is not the current content ETag`,
            413: problems`${ERRORS.document_too_large} (over the account's maximum document size) or ${ERRORS.storage_limit_exceeded}`,
            503: problems`${ERRORS.content_store_unavailable}: the content store cannot be reached; nothing was stored (Retry-After)`,
            507: problems`${ERRORS.insufficient_storage}: the content store has no room (a full disk); nothing was stored`,
          },
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    )
    .patch(
      "/documents/:id/content",
      async ({ principal, params, body, request, set }) => {
        const row = await patchContent(
          deps,
          requirePrincipal(principal).accountId,
          params.id,
          request.headers.get("content-type"),
          () => rawBytes(body),
          { ifMatch: request.headers.get("if-match") },
        );
        set.headers.ETag = contentETag(row.contentHash);
        return { success: true as const, document: documentView(row) };
      },
      {
        params: IdParams,
        response: { 200: DocumentResponse },
        detail: operation({
          operationId: "patchDocumentContent",
          summary: "Patch document content (JSON Patch or JSON Merge Patch)",
          description: `Applies the patch to the current content and stores the result as a new version. \`${JSON_PATCH}\`: an RFC 6902 array of operations (add, remove, replace, move, copy, test), applied atomically. \`${MERGE_PATCH}\`: an RFC 7396 merge patch. The parts the patch does not touch keep their exact bytes; the values it writes are stored as written in the patch.`,
          requestBody: {
            description: "the patch, by its media type",
            content: { [JSON_PATCH]: JsonPatchDocument, [MERGE_PATCH]: MergePatchDocument },
          },
          errors: {
            400: problems`${ERRORS.patch_invalid}: not an array of operations, a malformed operation, or a path that does not exist (errors[0].path is /<index> of the operation); ${ERRORS.malformed_json}; ${ERRORS.body_required}`,
            404: problems`${ERRORS.document_not_found}`,
            409: problems`${ERRORS.patch_test_failed}: a test operation found a different value`,
            412: problems`${ERRORS.precondition_failed}: If-Match is not the current content ETag`,
            408: problems`${ERRORS.patch_timeout}: a patch applied in a worker ran past UTILITY_TIMEOUT_MS; nothing was stored`,
            413: problems`${ERRORS.document_too_large} (the result would be over the account's maximum document size: refused at that operation, before it copies anything), ${ERRORS.storage_limit_exceeded}, or ${ERRORS.patch_too_expensive} (more than 16 × the limit plus the patch in work: split it)`,
            415: problems`${ERRORS.unsupported_media_type}: neither application/json-patch+json nor application/merge-patch+json`,
            429: problems`${ERRORS.account_busy}: a patch too large for the request thread, and the account already has UTILITY_QUEUE_PER_ACCOUNT runs waiting for a worker; retry after Retry-After`,
            503: problems`${ERRORS.busy}: a patch too large for the request thread, and every worker is busy with UTILITY_QUEUE_LIMIT runs waiting; retry after Retry-After`,
          },
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    )
    .get(
      "/documents/:id/versions",
      async ({ principal, params, query }) => {
        const { versions, nextCursor } = await listVersions(deps, requirePrincipal(principal).accountId, params.id, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
        });
        return { success: true as const, versions: versions.map(versionView), nextCursor };
      },
      {
        params: IdParams,
        query: VersionsQuery,
        response: { 200: VersionsResponse },
        detail: {
          ...operation({
            operationId: "listDocumentVersions",
            summary: "List a document's kept versions",
            description:
              "Newest first (the current content is the newest); limit and cursor as in the document list. The account's maxVersions bounds how many are kept; older ones are dropped.",
            errors: {
              400: problems`${ERRORS.validation_failed} (limit, unknown query parameter) or ${ERRORS.invalid_cursor}`,
              404: problems`${ERRORS.document_not_found}`,
            },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .get(
      "/documents/:id/versions/:version/content",
      async ({ principal, params, request, set }) => {
        const headers = set.headers as Record<string, string>;
        const { document, version } = await findVersion(deps, requirePrincipal(principal).accountId, params.id, params.version);
        // a conditional request is answered from the row, without reading the content from the store
        const etag = contentETag(version.contentHash);
        if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return notModifiedResponse(etag, headers);
        return contentResponse(request, headers, document.name, etag, await openVersionContent(deps, params.id, params.version, version));
      },
      {
        params: VersionParams,
        // Documents the body for typed clients; the handler streams a Response, which Elysia does not re-validate.
        response: { 200: t.Unknown({ description: "any JSON value: the version's bytes, exactly as stored" }), 304: t.Void() },
        detail: operation({
          operationId: "downloadDocumentVersion",
          summary: "Download one version's content",
          description: "That version's bytes, with its ETag and Content-Disposition like the current download; If-None-Match gives 304.",
          errors: { 404: problems`${ERRORS.document_not_found}, or ${ERRORS.version_not_found} for a version that is not kept` },
          headers: { 200: ["ETag", "Content-Disposition"] },
          conditional: ["If-None-Match"],
          notModified: true,
          ranges: true,
        }),
      },
    )
    .post(
      "/documents/:id/versions/:version/restore",
      async ({ principal, params, request, set }) => {
        const row = await restoreVersion(deps, requirePrincipal(principal).accountId, params.id, params.version, {
          ifMatch: request.headers.get("if-match"),
        });
        set.headers.ETag = contentETag(row.contentHash);
        return { success: true as const, document: documentView(row) };
      },
      {
        params: VersionParams,
        response: { 200: DocumentResponse },
        detail: operation({
          operationId: "restoreDocumentVersion",
          summary: "Restore a version as a new version",
          description:
            "The content of that version becomes a new version (history is never rewritten); 200 with the document and its new content ETag.",
          errors: {
            404: problems`${ERRORS.document_not_found}, or ${ERRORS.version_not_found} for a version that is not kept`,
            412: problems`${ERRORS.precondition_failed}: If-Match is not the current content ETag`,
            413: problems`${ERRORS.document_too_large} or ${ERRORS.storage_limit_exceeded}: the copy does not fit the account`,
          },
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    )
    .delete(
      "/documents/:id",
      async ({ principal, params, request }) => {
        const row = await softDelete(deps, requirePrincipal(principal).accountId, params.id, { ifMatch: request.headers.get("if-match") });
        return { success: true as const, deleted: true as const, purgeAt: row.purgeAt! };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: operation({
          operationId: "deleteDocument",
          summary: "Soft-delete a document",
          description: "It stays restorable (and counts towards storage) until purgeAt.",
          errors: {
            404: problems`${ERRORS.document_not_found}`,
            412: problems`${ERRORS.precondition_failed}: If-Match is not the current metadata ETag`,
          },
          conditional: ["If-Match"],
        }),
      },
    )
    .post(
      "/documents/:id/purge",
      async ({ principal, params }) => {
        await purgeDocument(deps, requirePrincipal(principal).accountId, params.id);
        return { success: true as const, deleted: true as const, permanent: true as const };
      },
      {
        params: IdParams,
        response: { 200: Purged },
        detail: operation({
          operationId: "purgeDocument",
          summary: "Purge a soft-deleted document",
          description: "Permanent; releases its storage.",
          errors: {
            404: problems`${ERRORS.document_not_found}`,
            409: problems`${ERRORS.document_not_deleted}: the document is active; delete it first`,
          },
        }),
      },
    )
    .post(
      "/documents/:id/restore",
      async ({ principal, params, set }) => {
        const row = await restoreDocument(deps, requirePrincipal(principal).accountId, params.id);
        return withMetadataETag(set, row);
      },
      {
        params: IdParams,
        response: { 200: DocumentResponse },
        detail: operation({
          operationId: "restoreDocument",
          summary: "Restore a soft-deleted document",
          errors: { 404: problems`${ERRORS.document_not_found}`, 409: problems`${ERRORS.document_not_deleted}: the document is active` },
          headers: { 200: ["ETag"] },
        }),
      },
    )
    .get(
      "/export",
      ({ principal, query, set }) => {
        const stream = exportDocuments(deps, requirePrincipal(principal).accountId, {
          folder: query.folder,
          recursive: query.recursive === "true",
          deleted: query.deleted === "true",
        });
        return new Response(stream, {
          headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" },
        });
      },
      {
        query: ExportQuery,
        detail: operation({
          operationId: "exportDocuments",
          summary: "Export documents as NDJSON",
          description:
            'One line per document, oldest first: {"document": {metadata}, "content": <the stored JSON text, byte for byte>} (content with line breaks comes as contentText). `folder` and `recursive` select as in the document list. Streamed: memory stays flat whatever the number of documents.',
          responses: {
            200: {
              description: "One line per document",
              content: { "application/x-ndjson": new NdjsonLines(ExportLine, "one line per document, oldest first") },
            },
          },
        }),
      },
    )
    .post(
      "/import",
      ({ principal, request, set }) => {
        const accountId = requirePrincipal(principal).accountId;
        const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
        if (type !== "application/x-ndjson")
          throw httpError(ERRORS.unsupported_media_type, "The import body must be NDJSON: Content-Type: application/x-ndjson");
        const results = importDocuments(deps, accountId, request.body, deps.importLineMaxBytes);
        return new Response(results, {
          headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" },
        });
      },
      {
        detail: operation({
          operationId: "importDocuments",
          summary: "Import documents from NDJSON",
          description:
            'The export\'s line format; of document, only name, description, tags and folder are read. Each line is created on its own (quotas per line) and answered by one result line, streamed as it is stored: {"line": n, "id"} or {"line": n, "error": {code, detail}}. Blank lines are skipped.',
          requestBody: {
            description: "One document per line (Content-Type: application/x-ndjson)",
            content: { "application/x-ndjson": new NdjsonLines(ImportLine, "one document per line; blank lines are skipped") },
          },
          responses: {
            200: {
              description: "One result per input line",
              content: { "application/x-ndjson": new NdjsonLines(ImportResult, "one result per non-blank input line, in order") },
            },
          },
          errors: { 415: problems`${ERRORS.unsupported_media_type}: the body is not application/x-ndjson (or has a Content-Encoding)` },
        }),
      },
    )
    .get(
      "/folders",
      async ({ principal }) => ({ success: true as const, folders: await listFolders(deps, requirePrincipal(principal).accountId) }),
      {
        response: { 200: FoldersResponse },
        detail: operation({
          operationId: "listFolders",
          summary: "List folders with their document counts",
          description:
            "Every folder (and ancestor) a document was ever filed in, by path; documentCount counts active documents directly in it.",
        }),
      },
    );
};
