/** A document's kept versions: list them, download one, restore one as a new version. */
import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { contentResponse, notModifiedResponse } from "../download";
import { contentETag, ifNoneMatchHits } from "../etag";
import { listLimit } from "../listing";
import { DocumentResponse, IdParams, LIMIT_PARAMETER, VersionParams, VersionsQuery, VersionsResponse } from "../model";
import { documentView } from "../service";
import { findVersion, listVersions, openVersionContent, restoreVersion, versionView } from "../versions";
import { type DocumentRoutesDeps, schemaWarningsOf } from "./common";

export const versionRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
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
        return { success: true as const, document: documentView(row), ...schemaWarningsOf(set, row) };
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
            413: problems`${ERRORS.document_too_large} or ${ERRORS.storage_limit_exceeded}: the copy does not fit the account, or ${ERRORS.schema_validation_too_expensive} (its folder's schema could not be checked within its budget)`,
            422: problems`${ERRORS.schema_violation}: the restored content breaks its folder's schema (mode reject); nothing was written`,
          },
          schemaWarnings: 200,
          headers: { 200: ["ETag"] },
          conditional: ["If-Match"],
        }),
      },
    );
