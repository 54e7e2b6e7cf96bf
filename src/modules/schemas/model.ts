/** The schemas API's request and response schemas (the named components of the OpenAPI document). */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { LIST_LIMIT_MAX } from "../documents/listing";
import { ListQuery, SchemaErrorItem } from "../documents/model";

const SchemaMode = t.Union([t.Literal("reject"), t.Literal("warn")], {
  description: "reject (default): a write that breaks the schema answers 422 and stores nothing; warn: it is stored, with warnings",
});
const Folders = t.Array(t.String(), {
  description: "the folders it governs, and their subfolders (the nearest bound ancestor governs a document); at most 100",
});
const JsonSchema = t.Unknown({
  description:
    "a JSON Schema, draft 2020-12 (an object or a boolean), stored exactly as written; $ref may name it, the 2020-12 meta-schemas, or another schema of the account by its $id or urn:kiln:schema:<id>",
});

export const CreateSchemaBody = t.Object(
  { name: t.String(), schema: JsonSchema, folders: t.Optional(Folders), mode: t.Optional(SchemaMode) },
  { title: "CreateSchema" },
);

export const UpdateSchemaBody = t.Object(
  {
    name: t.Optional(t.String()),
    schema: t.Optional(t.Unknown({ description: "a new schema text: the next version (older ones stay readable with ?version=n)" })),
    folders: t.Optional(t.Array(t.String(), { description: "replaces the folders it governs ([]: none)" })),
    mode: t.Optional(SchemaMode),
  },
  { title: "UpdateSchema" },
);

export const SchemaView = t.Object(
  {
    id: t.String({ description: "sch_…" }),
    name: t.String(),
    version: Type.Integer({ description: "1, then + 1 for each new schema text" }),
    folders: t.Array(t.String()),
    mode: SchemaMode,
    uri: t.String({ description: "what a $ref of another schema names it by: its $id, else urn:kiln:schema:<id>" }),
    createdAt: Type.Integer({ description: "epoch ms" }),
    updatedAt: Type.Integer({ description: "epoch ms" }),
  },
  { title: "Schema" },
);

export const SchemaResponse = t.Object({ success: t.Literal(true), schema: SchemaView }, { title: "SchemaResult" });

export const SchemaWithText = t.Object(
  {
    success: t.Literal(true),
    schema: t.Composite([SchemaView, t.Object({ schema: t.Unknown({ description: "the schema text of this version, as written" }) })]),
  },
  { title: "SchemaVersionResult" },
);

export const SchemaListQuery = t.Omit(ListQuery, ["folder", "deleted", "recursive"], { additionalProperties: false });

export const SchemaListResponse = t.Object({
  success: t.Literal(true),
  schemas: t.Array(SchemaView, { description: `newest first, at most limit (1–${LIST_LIMIT_MAX})` }),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const SchemaParams = t.Object({ id: t.String({ description: "sch_…" }) });
export const SchemaVersionQuery = t.Object(
  { version: t.Optional(t.String({ description: "a version number: 1, 2, … (default: the current one)" })) },
  { additionalProperties: false },
);

export const SchemaDeleted = t.Object({ success: t.Literal(true), deleted: t.Literal(true) });

export const ValidateBody = t.Object(
  {
    content: t.Optional(t.Unknown({ description: "the content to check, as it would be stored" })),
    documentId: t.Optional(t.String({ description: "or a stored document's current content" })),
  },
  { title: "ValidateAgainstSchema" },
);

export const ValidateResponse = t.Object(
  {
    success: t.Literal(true),
    valid: t.Boolean(),
    errors: t.Array(SchemaErrorItem, { description: "empty when valid; at most 100" }),
  },
  { title: "SchemaValidation" },
);
