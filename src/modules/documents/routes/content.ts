/** A document's content: download it, replace it, patch it. */
import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { JSON_PATCH, MERGE_PATCH } from "../../../core/json/patch";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { downloadResponse, notModifiedResponse } from "../download";
import { contentETag, ifNoneMatchHits } from "../etag";
import { ContentReplaced, DocumentResponse, IdParams, JsonPatchDocument, MergePatchDocument } from "../model";
import { documentView, getDocument, openContent, replaceContent } from "../service";
import { patchContent } from "../versions";
import { type DocumentRoutesDeps, rawBytes, schemaWarningsOf } from "./common";

export const contentRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
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
      "/documents/:id/content",
      async ({ principal, params, body, request, set }) => {
        const row = await replaceContent(deps, requirePrincipal(principal).accountId, params.id, rawBytes(body), {
          ifMatch: request.headers.get("if-match"),
        });
        set.headers.ETag = contentETag(row.contentHash);
        return { success: true as const, fileSize: row.fileSize, ...schemaWarningsOf(set, row) };
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
            413: problems`${ERRORS.document_too_large} (over the account's maximum document size), ${ERRORS.storage_limit_exceeded}, or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
            422: problems`${ERRORS.schema_violation}: the content breaks its folder's schema (mode reject); nothing was written`,
            503: problems`${ERRORS.content_store_unavailable}: the content store cannot be reached; nothing was stored (Retry-After)`,
            507: problems`${ERRORS.insufficient_storage}: the content store has no room (a full disk); nothing was stored`,
          },
          schemaWarnings: 200,
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
        return { success: true as const, document: documentView(row), ...schemaWarningsOf(set, row) };
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
            413: problems`${ERRORS.document_too_large} (the result would be over the account's maximum document size: refused at that operation, before it copies anything), ${ERRORS.storage_limit_exceeded}, or ${ERRORS.patch_too_expensive} (more than 16 × the limit plus the patch in work: split it), or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
            422: problems`${ERRORS.schema_violation}: the result breaks its folder's schema (mode reject); nothing was written`,
            415: problems`${ERRORS.unsupported_media_type}: neither application/json-patch+json nor application/merge-patch+json`,
            429: problems`${ERRORS.account_busy}: a patch too large for the request thread, and the account already has UTILITY_QUEUE_PER_ACCOUNT runs waiting for a worker; retry after Retry-After`,
            503: problems`${ERRORS.busy}: a patch too large for the request thread, and every worker is busy with UTILITY_QUEUE_LIMIT runs waiting; retry after Retry-After`,
          },
          schemaWarnings: 200,
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    );
