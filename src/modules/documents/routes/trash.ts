/** Soft delete, and what follows it: purge for good, or restore. */
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { Deleted, DocumentResponse, IdParams, Purged } from "../model";
import { purgeDocument, restoreDocument, softDelete } from "../placement";
import { type DocumentRoutesDeps, withMetadataETag } from "./common";

export const trashRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
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
    );
