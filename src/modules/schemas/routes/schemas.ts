/** The schemas themselves: create, list, read (a version too), change and delete. */
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { rawBody } from "../../../http/body";
import { operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { listLimit } from "../../documents/listing";
import { LIMIT_PARAMETER } from "../../documents/model";
import {
  CreateSchemaBody,
  SchemaDeleted,
  SchemaListQuery,
  SchemaListResponse,
  SchemaParams,
  SchemaResponse,
  SchemaVersionQuery,
  SchemaWithText,
  UpdateSchemaBody,
} from "../model";
import { createSchema, deleteSchema, getSchemaVersion, listSchemas, schemaView, updateSchema } from "../service";
import type { SchemaRoutesDeps } from "./common";

const NOT_FOUND = { 404: problems`${ERRORS.schema_not_found} (also another account's)` };
const SCHEMA_REFUSED = problems`${ERRORS.schema_invalid}: not a valid 2020-12 schema, over SCHEMA_MAX_BYTES or SCHEMA_MAX_DEPTH, an unsupported $schema, a $ref to anything but itself, the meta-schemas or another schema of the account, or a pattern the linear-time engine cannot run (errors[].path points into the body); ${ERRORS.validation_failed} (name, folders)`;
const CONFLICTS = problems`${ERRORS.schema_folder_taken} (a folder has at most one schema), ${ERRORS.schema_uri_taken} (another schema has this $id)`;

export const schemaRoutes = (deps: SchemaRoutesDeps) =>
  new Elysia({ prefix: "/api/v1/schemas", detail: { tags: ["Schemas"] } })
    .use(deps.auth)
    .post(
      "",
      async ({ principal, body, request, set }) => {
        const row = await createSchema(deps, requirePrincipal(principal).accountId, body, rawBody(request));
        set.status = 201;
        set.headers.Location = `/api/v1/schemas/${row.id}`;
        return { success: true as const, schema: schemaView(row) };
      },
      {
        body: CreateSchemaBody,
        response: { 201: SchemaResponse },
        detail: operation({
          operationId: "createSchema",
          summary: "Create a JSON Schema for folders",
          description:
            "Every write whose content lands in a governed folder (or a subfolder without a nearer schema) is validated against it. The schema is checked in full here: nothing is ever fetched over the network.",
          errors: {
            400: SCHEMA_REFUSED,
            409: problems`${ERRORS.schema_folder_taken}, ${ERRORS.schema_uri_taken}, or ${ERRORS.schema_limit_reached}`,
          },
          headers: { 201: ["Location"] },
        }),
      },
    )
    .get(
      "",
      async ({ principal, query }) => {
        const { schemas, nextCursor } = await listSchemas(deps, requirePrincipal(principal).accountId, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
        });
        return { success: true as const, schemas: schemas.map(schemaView), nextCursor };
      },
      {
        query: SchemaListQuery,
        response: { 200: SchemaListResponse },
        detail: {
          ...operation({
            operationId: "listSchemas",
            summary: "List schemas",
            description: "Newest first; pass nextCursor as cursor for the next page.",
            errors: { 400: problems`${ERRORS.validation_failed} (limit) or ${ERRORS.invalid_cursor}` },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params, query }) => {
        const { row, version, text } = await getSchemaVersion(deps, requirePrincipal(principal).accountId, params.id, query.version);
        // the schema text goes out as stored (its numbers kept), spliced into the answer
        const view = JSON.stringify({ ...schemaView(row), version });
        return new Response(`{"success":true,"schema":${view.slice(0, -1)},"schema":${text}}}`, {
          headers: { "Content-Type": "application/json" },
        });
      },
      {
        params: SchemaParams,
        query: SchemaVersionQuery,
        response: { 200: SchemaWithText },
        detail: operation({
          operationId: "getSchema",
          summary: "Get a schema with its text",
          description: "The current version, or ?version=n for an older one (its number in `version`).",
          errors: { ...NOT_FOUND, 400: problems`${ERRORS.validation_failed} (unknown query parameter)` },
        }),
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body, request }) => {
        const row = await updateSchema(deps, requirePrincipal(principal).accountId, params.id, body, rawBody(request));
        return { success: true as const, schema: schemaView(row) };
      },
      {
        params: SchemaParams,
        body: UpdateSchemaBody,
        response: { 200: SchemaResponse },
        detail: operation({
          operationId: "updateSchema",
          summary: "Change a schema",
          description:
            "A new `schema` makes the next version (older versions stay readable); `folders` replaces the folders it governs; `mode` and `name` change in place. Writes validated from then on use the new version.",
          errors: { ...NOT_FOUND, 400: SCHEMA_REFUSED, 409: CONFLICTS },
        }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        await deleteSchema(deps, requirePrincipal(principal).accountId, params.id);
        return { success: true as const, deleted: true as const };
      },
      {
        params: SchemaParams,
        response: { 200: SchemaDeleted },
        detail: operation({
          operationId: "deleteSchema",
          summary: "Delete a schema and its versions",
          description: "Refused while it governs folders: unbind them first (PATCH with folders: []).",
          errors: { ...NOT_FOUND, 409: problems`${ERRORS.schema_in_use}: it still governs folders` },
        }),
      },
    );
