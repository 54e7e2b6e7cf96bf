/**
 * Query indexes and queries (permission `documents`; docs/query.md): `/api/v1/indexes` declares, lists
 * and drops indexes; `POST /api/v1/documents/query` answers a query from one index's entries.
 */

import { Elysia } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { rawBody } from "../../http/body";
import { operation } from "../../http/openapi";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { type QueryDeps, runQuery } from "./execute";
import { createIndex, dropIndex, getIndex, type IndexesDeps, indexView } from "./indexes";
import { CreateIndexBody, IndexDeleted, IndexListResponse, IndexParams, IndexResponse, QueryBody, QueryResponse } from "./model";

const NOT_FOUND = { 404: problems`${ERRORS.index_not_found} (also another account's)` };

export const indexesModule = (deps: IndexesDeps & { auth: AuthPlugin }) =>
  new Elysia({ name: "kiln.indexes", prefix: "/api/v1/indexes", detail: { tags: ["Query"] } })
    .use(deps.auth)
    .post(
      "",
      async ({ principal, body, set }) => {
        const row = await createIndex(deps, requirePrincipal(principal).accountId, body);
        set.status = 202;
        set.headers.Location = `/api/v1/indexes/${row.id}`;
        return { success: true as const, index: indexView(row) };
      },
      {
        body: CreateIndexBody,
        response: { 202: IndexResponse },
        detail: operation({
          operationId: "createIndex",
          summary: "Declare a query index on a folder",
          description:
            "Indexes the folder's documents and its subfolders'. Answers at once: existing documents are indexed in the background (state building, then ready with the event index.ready, or failed with index.failed and a reason); new writes are indexed as they commit. An index on an empty folder is ready at once.",
          errors: {
            400: problems`${ERRORS.validation_failed} (folder, fields: 1–4 JSON Pointers, each once; name)`,
            409: problems`${ERRORS.index_limit_reached} or ${ERRORS.index_name_taken}`,
          },
          headers: { 202: ["Location"] },
        }),
      },
    )
    .get(
      "",
      async ({ principal }) => {
        const rows = await deps.repository.indexes(requirePrincipal(principal).accountId);
        return { success: true as const, indexes: rows.map(indexView) };
      },
      {
        response: { 200: IndexListResponse },
        detail: operation({ operationId: "listIndexes", summary: "List the account's query indexes", description: "In id order." }),
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        success: true as const,
        index: indexView(await getIndex(deps, requirePrincipal(principal).accountId, params.id)),
      }),
      {
        params: IndexParams,
        response: { 200: IndexResponse },
        detail: operation({ operationId: "getIndex", summary: "Get a query index, with its build's progress", errors: NOT_FOUND }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        await dropIndex(deps, requirePrincipal(principal).accountId, params.id);
        return { success: true as const, message: `Index '${params.id}' dropped` };
      },
      {
        params: IndexParams,
        response: { 200: IndexDeleted },
        detail: operation({
          operationId: "deleteIndex",
          summary: "Drop a query index and its entries",
          description: "Queries it served answer query_needs_index from then on; its entries' storage is released.",
          errors: NOT_FOUND,
        }),
      },
    );

export const queryModule = (deps: QueryDeps & { auth: AuthPlugin }) =>
  new Elysia({ name: "kiln.query", prefix: "/api/v1/documents", detail: { tags: ["Query"] } }).use(deps.auth).post(
    "/query",
    async ({ principal, body, request }) =>
      new Response(await runQuery(deps, requirePrincipal(principal).accountId, body, rawBody(request)), {
        headers: { "Content-Type": "application/json" },
      }),
    {
      body: QueryBody,
      response: { 200: QueryResponse },
      detail: operation({
        operationId: "queryDocuments",
        summary: "Query a folder's documents on a declared index",
        description:
          "Served by one index of the folder: equalities on a prefix of its fields, then one range and/or the sort on the next field; other conditions on its fields are checked on the index entries. Never a scan of the documents: with no index to serve it, 400 query_needs_index with suggestedIndex. Pages follow nextCursor (null at the end); a page may hold fewer than limit documents when many entries were checked and rejected.",
        errors: {
          400: problems`${ERRORS.validation_failed} (limit 1–1,000, sort, fields), ${ERRORS.query_invalid} ($regex, $where, $expr, unknown operators, arrays as values, a filter over maxFilterBytes; errors[] points into the body), ${ERRORS.query_needs_index} (suggestedIndex can be POSTed to /api/v1/indexes) or ${ERRORS.invalid_cursor}`,
          409: problems`${ERRORS.index_building}: the index that serves it is still being built (progress)`,
        },
      }),
    },
  );
