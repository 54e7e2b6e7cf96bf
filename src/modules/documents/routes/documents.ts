/** The documents themselves: list, create, read and update their metadata; and the folder list. */
import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { httpError } from "../../../core/errors";
import { parseRequestJson, rawBody } from "../../../http/body";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { ifNoneMatchHits, metadataETag } from "../etag";
import { listDocuments, listFolders, listLimit } from "../listing";
import {
  CreateDocumentBody,
  DocumentResponse,
  FoldersResponse,
  IdParams,
  LIMIT_PARAMETER,
  ListQuery,
  ListResponse,
  UpdateDocumentBody,
} from "../model";
import { updateMetadata } from "../placement";
import { createDocument, documentView, getDocument } from "../service";
import { type DocumentRoutesDeps, jsonAnswer, rawBytes, withMetadataETag } from "./common";

export const documentRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
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
        // serialised here: documentView builds ListResponse's shape, and Elysia's check and copy of 50 views
        // cost about 3 µs a page (tests/http/openapi-conformance.test.ts holds the answer to the schema)
        return jsonAnswer(JSON.stringify({ success: true, documents: documents.map(documentView), nextCursor }));
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
            413: problems`${ERRORS.document_too_large} (over the account's maximum document size), ${ERRORS.storage_limit_exceeded}, or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
            422: problems`${ERRORS.schema_violation}: the content breaks its folder's schema (mode reject); nothing was written`,
            503: problems`${ERRORS.content_store_unavailable}: the content store cannot be reached; nothing was stored (Retry-After)`,
            507: problems`${ERRORS.insufficient_storage}: the content store has no room (a full disk); nothing was stored`,
          },
          schemaWarnings: 201,
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
          const parsed = parseRequestJson(bytes);
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
            413: problems`${ERRORS.schema_validation_too_expensive}: a move into a governed folder whose schema could not check the content within its budget`,
            422: problems`${ERRORS.schema_violation}: a move into a folder whose schema (mode reject) the content breaks; nothing changed`,
          },
          schemaWarnings: 200,
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    );

/** Added after every other group: the OpenAPI document lists the paths in the order their routes are added. */
export const folderRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
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
