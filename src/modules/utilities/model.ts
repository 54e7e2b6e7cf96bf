import { t } from "elysia";

export const UtilityParams = t.Object({ utilityId: t.String({ description: "`<category>.<name>`, e.g. schema.clean-json" }) });

/** The execution body. The route reads it raw (it may travel to a worker unparsed), so this documents it. */
export const ExecuteBody = t.Object({
  inputs: t.Object({
    primary: t.Unknown({ description: "any JSON value, null included" }),
    secondary: t.Optional(t.Unknown({ description: "second input of multi-input utilities such as merge.deep-merge" })),
  }, { additionalProperties: false }),
  config: t.Optional(t.Object({}, { additionalProperties: true, description: "the utility's settings (see its configSchema); omitted fields take their defaults" })),
}, { additionalProperties: false, title: "UtilityRun" });

export const ExecuteResponse = t.Object({
  success: t.Literal(true),
  output: t.Unknown({ description: "the transformed JSON" }),
  durationMs: t.Number({ description: "the utility's own execution time, fractional milliseconds" }),
  creditsUsed: t.Literal(1),
}, { title: "UtilityOutput" });

export const UtilityView = t.Object({
  id: t.String(),
  name: t.String(),
  category: t.String(),
  description: t.String(),
  configSchema: t.Unknown({ description: "JSON Schema of `config`, with defaults" }),
}, { title: "Utility" });
