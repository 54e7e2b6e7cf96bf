import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DESCRIPTION_MAX, NAME_MAX } from "../../core/metadata";
import { MAX_STEPS } from "../../engine/run-plan";
import { LIST_LIMIT_MAX } from "../documents/listing";
import { DocumentView, ListQuery, SchemaWarningsMember } from "../documents/model";
import { Output } from "../utilities/model";

export const Step = t.Object(
  {
    utility: t.String({ description: "a utility id, e.g. generate.filter (GET /api/v1/utilities lists them)" }),
    config: t.Optional(
      t.Object(
        {},
        { additionalProperties: true, description: "the utility's settings, validated against its configSchema before anything runs" },
      ),
    ),
    secondary: t.Optional(t.Unknown({ description: "the step's second input (merge.deep-merge, analysis.diff), inline" })),
    secondaryDocumentId: t.Optional(
      t.String({ description: "the step's second input, a stored document (instead of secondary; needs the documents permission)" }),
    ),
  },
  { additionalProperties: false, description: "each step's output is the next step's primary" },
);

const Steps = t.Array(Step, { minItems: 1, maxItems: MAX_STEPS, description: `1 to ${MAX_STEPS} steps, run in order` });
const Name = t.String({ description: `1 to ${NAME_MAX} characters after trimming; no control characters` });

export const CreatePipelineBody = t.Object(
  {
    name: Name,
    description: t.Optional(t.String({ description: `at most ${DESCRIPTION_MAX} characters` })),
    steps: Steps,
  },
  { additionalProperties: false },
);

export const UpdatePipelineBody = t.Object(
  {
    name: t.Optional(Name),
    description: t.Optional(
      t.Union([t.String(), t.Null()], { description: `at most ${DESCRIPTION_MAX} characters; null or "" removes it` }),
    ),
    steps: t.Optional(Steps),
  },
  { additionalProperties: false, description: "at least one field; the others keep their values" },
);

export const PipelineView = t.Object({
  id: t.String({ description: "pip_…" }),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  steps: t.Array(Step),
  createdAt: Type.Integer({ description: "epoch ms" }),
  updatedAt: Type.Integer({ description: "epoch ms" }),
});

export const PipelineResponse = t.Object({ success: t.Literal(true), pipeline: PipelineView });

export const PipelineListQuery = t.Omit(ListQuery, ["folder", "deleted"], { additionalProperties: false });

export const PipelineListResponse = t.Object({
  success: t.Literal(true),
  pipelines: t.Array(PipelineView, { description: `newest first, at most limit (1–${LIST_LIMIT_MAX})` }),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const PipelineDeleted = t.Object({ success: t.Literal(true), deleted: t.Literal(true) });

export const PipelineParams = t.Object({ id: t.String({ description: "pip_…" }) });

const Inputs = t.Object(
  {
    primary: t.Optional(t.Unknown({ description: "the first step's input, any JSON value (null included)" })),
    primaryDocumentId: t.Optional(t.String({ description: "a stored document as the input instead (needs the documents permission)" })),
  },
  { additionalProperties: false, description: "exactly one of primary and primaryDocumentId" },
);

export const RunPipelineBody = t.Object({ steps: Steps, inputs: Inputs, output: t.Optional(Output) }, { additionalProperties: false });
export const RunSavedPipelineBody = t.Object({ inputs: Inputs, output: t.Optional(Output) }, { additionalProperties: false });

export const PipelineRunResponse = t.Object({
  success: t.Literal(true),
  output: t.Optional(t.Unknown({ description: "the last step's output (left out with output.return: false)" })),
  steps: t.Array(t.Object({ utility: t.String(), durationMs: t.Number({ description: "the step's own execution time" }) })),
  durationMs: t.Number({ description: "the whole run: parsing the input, every step, serialising the output" }),
  creditsUsed: Type.Integer({ description: "one per step" }),
  document: t.Optional(DocumentView),
  warnings: SchemaWarningsMember,
});
