import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DESCRIPTION_MAX, FOLDER_MAX, NAME_MAX, TAG_MAX, TAGS_MAX } from "../../core/metadata";
import { LIMIT_RULE, LIST_LIMIT_MAX } from "./listing";

const Name = t.String({ description: `1 to ${NAME_MAX} characters after trimming; no control characters` });
const Description = t.String({ description: `at most ${DESCRIPTION_MAX} characters` });
const Tags = t.Array(t.String(), { description: `at most ${TAGS_MAX} tags of 1 to ${TAG_MAX} characters; order kept, duplicates dropped` });
const Folder = t.Union([t.String(), t.Null()], {
  description: `a path such as "reports/2024"; leading, trailing and repeated '/' removed; no '.' or '..' segments; at most ${FOLDER_MAX} characters; "" or null = no folder`,
});

export const CreateDocumentBody = t.Object(
  {
    name: Name,
    content: t.Optional(t.Unknown({ description: "any JSON value, stored exactly as written in the request" })),
    contentText: t.Optional(t.String({ description: "the content as JSON text, stored byte for byte (instead of content)" })),
    description: t.Optional(Description),
    tags: t.Optional(Tags),
    folder: t.Optional(Folder),
  },
  { additionalProperties: false, title: "CreateDocument", description: "exactly one of content and contentText" },
);

export const UpdateDocumentBody = t.Object(
  {
    name: t.Optional(Name),
    description: t.Optional(
      t.Union([Description, t.Null()], { description: `at most ${DESCRIPTION_MAX} characters; null or "" removes it` }),
    ),
    tags: t.Optional(Tags),
    folder: t.Optional(Folder),
  },
  { additionalProperties: false, title: "UpdateDocument", description: "at least one field" },
);

export const DocumentView = t.Object(
  {
    id: t.String(),
    name: t.String(),
    title: t.String({ description: "equals name" }),
    description: t.Optional(t.String()),
    tags: t.Array(t.String()),
    folder: t.Union([t.String(), t.Null()]),
    fileSize: Type.Integer({ description: "bytes of stored content" }),
    version: Type.Integer({
      description: "the current content version: 1 for the content given at create, one more for every content change",
    }),
    createdAt: Type.Integer({ description: "epoch ms" }),
    updatedAt: Type.Integer({ description: "epoch ms" }),
  },
  { title: "Document" },
);

/** One place where content breaks a JSON Schema: a 422 schema_violation's errors[], a warn-mode write's warnings[]. */
export const SchemaErrorItem = t.Object(
  {
    path: t.String({ description: "JSON Pointer into the content" }),
    keyword: t.String({ description: "the schema keyword that failed: type, required, pattern, …" }),
    schemaPath: t.String({ description: "JSON Pointer into the schema (the evaluation path: $ref included)" }),
    message: t.String(),
  },
  { title: "SchemaError" },
);
export const SchemaWarningsMember = t.Optional(
  t.Array(SchemaErrorItem, {
    description: "present when the folder's schema (mode warn) found errors in what was stored; also counted in Kiln-Schema-Warnings",
  }),
);

export const DocumentResponse = t.Object(
  { success: t.Literal(true), document: DocumentView, warnings: SchemaWarningsMember },
  { title: "DocumentResult" },
);

/**
 * The page size: an integer to clients (Eden's type is a number, and LIMIT_PARAMETER documents it), checked
 * as the text it arrives as: 1 to 3 digits here (else 400 naming /limit), then 1 to 200 by listLimit().
 * Elysia's own t.Integer would coerce first: it takes "1e2", "+5" or "0x10", and its range errors lose
 * the field's path.
 */
const Limit = t
  .Transform(t.String({ pattern: "^[0-9]{1,3}$", error: LIMIT_RULE }))
  .Decode((text) => Number(text))
  .Encode((limit) => String(limit));

/** `limit` as the OpenAPI document declares it (it replaces the text schema the routes validate). */
export const LIMIT_PARAMETER = {
  name: "limit",
  in: "query",
  required: false,
  description: "page size",
  schema: { type: "integer", minimum: 1, maximum: LIST_LIMIT_MAX, default: 50 },
} as const;

const FolderQuery = t.Optional(
  t.String({
    description: 'a folder path: only the documents directly in it, or with recursive=true in it and its subfolders; "" = any folder',
  }),
);
const RecursiveQuery = t.Optional(
  t.Union([t.Literal("true"), t.Literal("false")], {
    description: "true: the folder's subfolders too, at any depth (folder=a matches a and a/b, never ab); default false",
  }),
);

export const ListQuery = t.Object(
  {
    limit: t.Optional(Limit),
    cursor: t.Optional(t.String({ description: "nextCursor of the previous page" })),
    folder: FolderQuery,
    recursive: RecursiveQuery,
    deleted: t.Optional(
      t.Union([t.Literal("true"), t.Literal("false")], { description: "true lists the caller's soft-deleted documents" }),
    ),
  },
  { additionalProperties: false },
);

export const ExportQuery = t.Object(
  {
    folder: FolderQuery,
    recursive: RecursiveQuery,
    deleted: t.Optional(
      t.Union([t.Literal("true"), t.Literal("false")], { description: "true exports the soft-deleted documents instead" }),
    ),
  },
  { additionalProperties: false },
);

export const ListResponse = t.Object(
  {
    success: t.Literal(true),
    documents: t.Array(DocumentView),
    nextCursor: t.Union([t.String(), t.Null()]),
  },
  { title: "DocumentList" },
);

export const IdParams = t.Object({ id: t.String() });

export const VersionParams = t.Object({ id: t.String(), version: t.String({ description: "a version number: 1, 2, …" }) });

const Pointer = (description: string) => t.String({ description: `JSON Pointer (RFC 6901): ${description}` });
const PatchValue = t.Unknown({ description: "any JSON value, stored as written" });
const Op = <Names extends string>(...names: Names[]) => Type.Unsafe<Names>({ type: "string", enum: names });

/** The JSON Patch body, one shape per kind of operation (documentation: the handler reads the raw bytes). */
export const JsonPatchDocument = t.Array(
  t.Union([
    t.Object(
      { op: Op("add", "replace", "test"), path: Pointer("where the value goes (test: the value to compare)"), value: PatchValue },
      { title: "JsonPatchValueOperation", description: "add, replace or test: a path and a value" },
    ),
    t.Object({ op: Op("remove"), path: Pointer("the value to remove") }, { title: "JsonPatchRemoveOperation" }),
    t.Object(
      { op: Op("move", "copy"), from: Pointer("the value to move or copy"), path: Pointer("where it goes") },
      { title: "JsonPatchMoveOperation", description: "move or copy: from and path" },
    ),
  ]),
  { title: "JsonPatch", description: "RFC 6902: operations applied in order, all or nothing" },
);

/** The JSON Merge Patch body (RFC 7396), as a client sends it: an object merged member by member. */
export const MergePatchDocument = t.Object(
  {},
  {
    additionalProperties: true,
    title: "MergePatch",
    description:
      "RFC 7396: each member replaces the content's member of that name (objects merge recursively), null removes it. (A patch that is not an object replaces the whole content, as RFC 7396 says; PUT .../content does the same.)",
  },
);

export const VersionsQuery = t.Object(
  {
    limit: ListQuery.properties.limit,
    cursor: ListQuery.properties.cursor,
  },
  { additionalProperties: false },
);

export const VersionView = t.Object({
  version: Type.Integer({ description: "1 for the content given at create" }),
  fileSize: Type.Integer({ description: "bytes of this version's content" }),
  etag: t.String({ description: "this version's content ETag (as its download answers)" }),
  createdAt: Type.Integer({ description: "epoch ms when this version was made" }),
});

export const VersionsResponse = t.Object({
  success: t.Literal(true),
  versions: t.Array(VersionView, { description: "newest first; the first one (without cursor) is the current content" }),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const FoldersResponse = t.Object(
  {
    success: t.Literal(true),
    folders: t.Array(
      t.Object(
        {
          path: t.String(),
          documentCount: Type.Integer({ description: "active documents directly in this folder" }),
          createdAt: Type.Integer(),
        },
        { title: "Folder" },
      ),
    ),
  },
  { title: "FolderList" },
);

export const Deleted = t.Object(
  { success: t.Literal(true), deleted: t.Literal(true), purgeAt: Type.Integer({ description: "epoch ms when the sweeper purges it" }) },
  { title: "DeletedDocument" },
);
export const Purged = t.Object({ success: t.Literal(true), deleted: t.Literal(true), permanent: t.Literal(true) });
export const ContentReplaced = t.Object({ success: t.Literal(true), fileSize: Type.Integer(), warnings: SchemaWarningsMember });

/** A line of an export, and of an import (whose `document` may hold more fields: they are ignored). */
const contentMembers = {
  content: t.Optional(t.Unknown({ description: "the content, embedded byte for byte" })),
  contentText: t.Optional(
    t.String({ description: "instead of content, for content whose text holds line breaks: the text as a JSON string" }),
  ),
};
export const ExportLine = t.Object({ document: DocumentView, ...contentMembers }, { title: "ExportLine" });
export const ImportLine = t.Object(
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
export const ImportResult = t.Union(
  [
    t.Object({ line: Type.Integer({ description: "the input line's number, from 1" }), id: t.String(), warnings: SchemaWarningsMember }),
    t.Object({
      line: Type.Integer(),
      error: t.Object({
        code: t.String(),
        detail: t.String(),
        schema: t.Optional(t.Object({ id: t.String(), version: Type.Integer() }, { description: "schema_violation: the schema" })),
        errors: t.Optional(t.Array(t.Unknown(), { description: "validation_failed or schema_violation: each error" })),
      }),
    }),
  ],
  { title: "ImportResult" },
);
