import type { Static, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { NAME_MAX } from "../../core/metadata";
import type { UtilityConfig, UtilityId } from "../../utilities/registry";
import { DocumentView, SchemaWarningsMember } from "../documents/model";

export const UtilityParams = t.Object({ utilityId: t.String({ description: "`<category>.<name>`, e.g. schema.clean-json" }) });

export const Output = t.Object(
  {
    saveAs: t.Optional(
      t.Object(
        {
          name: t.String({ description: `1 to ${NAME_MAX} characters after trimming` }),
          folder: t.Optional(t.Union([t.String(), t.Null()])),
          tags: t.Optional(t.Array(t.String())),
          description: t.Optional(t.String()),
        },
        { additionalProperties: false, description: "save the output as a new document" },
      ),
    ),
    saveTo: t.Optional(t.String({ description: "save the output as the new content of this document (doc_…)" })),
    ifMatch: t.Optional(t.String({ description: "with saveTo: the document's content ETag; 412 when it changed" })),
    return: t.Optional(t.Boolean({ description: "false leaves output out of the response", default: true })),
  },
  {
    additionalProperties: false,
    title: "RunOutput",
    description: "saveAs and saveTo need the documents permission; a save and its run succeed or fail together",
  },
);

/** The execution body. The route reads it raw (it may travel to a worker unparsed), so this documents it. */
export const ExecuteBody = t.Object(
  {
    inputs: t.Object(
      {
        primary: t.Optional(t.Unknown({ description: "any JSON value, null included" })),
        primaryDocumentId: t.Optional(t.String({ description: "a stored document as primary instead (needs the documents permission)" })),
        secondary: t.Optional(t.Unknown({ description: "second input of multi-input utilities such as merge.deep-merge" })),
        secondaryDocumentId: t.Optional(t.String({ description: "a stored document as secondary instead" })),
      },
      {
        additionalProperties: false,
        description: "exactly one of primary and primaryDocumentId; at most one of secondary and secondaryDocumentId",
      },
    ),
    config: t.Optional(
      t.Object(
        {},
        { additionalProperties: true, description: "the utility's settings (see its configSchema); omitted fields take their defaults" },
      ),
    ),
    output: t.Optional(Output),
  },
  { additionalProperties: false, title: "UtilityRun" },
);

export const ExecuteResponse = t.Object(
  {
    success: t.Literal(true),
    output: t.Optional(t.Unknown({ description: "the transformed JSON (left out with output.return: false)" })),
    durationMs: t.Number({ description: "the utility's own execution time, fractional milliseconds" }),
    creditsUsed: t.Literal(1),
    document: t.Optional(DocumentView),
    warnings: SchemaWarningsMember,
  },
  { title: "UtilityOutput" },
);

export const UtilityView = t.Object(
  {
    id: t.String(),
    name: t.String(),
    category: t.String(),
    description: t.String(),
    configSchema: t.Object(
      {},
      {
        additionalProperties: true,
        description:
          "the JSON Schema (2020-12) of `config`, with each field's default; the same schema types `config` in this utility's own run operation (run<Utility>, e.g. runSchemaCleanJson)",
      },
    ),
  },
  { title: "Utility" },
);

/** `schema.clean-json` → `SchemaCleanJson`: a utility's name in the OpenAPI document (operations, components). */
export const openApiName = (utilityId: string) =>
  utilityId
    .split(/[.-]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");

/** The run body of one utility: ExecuteBody with `config` typed by that utility's published schema. */
export const runBodyOf = (utilityId: string, configSchema: object): TSchema =>
  t.Object(
    {
      ...ExecuteBody.properties,
      config: t.Optional({ ...(configSchema as TSchema), title: `${openApiName(utilityId)}Config` }),
    },
    { additionalProperties: false, title: `${openApiName(utilityId)}Run` },
  );

/** The body a client sends to run utility `Id`, its config typed by that utility's schema (for Eden clients). */
export type UtilityRunBody<Id extends UtilityId> = Omit<Static<typeof ExecuteBody>, "config"> & { config?: UtilityConfig<Id> };
