/**
 * schema.compute: record-wise; each field's template is evaluated against the record in order (a
 * later field sees earlier results) and written at its target path. Templates are compiled once per
 * request; each record is copied before it is written to, so the input is never changed.
 *
 * Output bound: none by construction (a field may hold the whole input, `{{ $root }}`, or the record
 * so far, `{{ $ }}`, which doubles it per field), so each computed value is copied, charged to the
 * budget first, and so are the nulls that pad an array written past its end. The copy also keeps a
 * record that takes itself (`{{ $ }}`) from becoming a cycle.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { unlimitedBudget } from "../budget";
import { parseConfigPath } from "../shared/config-paths";
import { compileTemplate } from "../shared/expressions";
import { set } from "../shared/paths";
import { cloneJson, mapRecords, objectRecord } from "../shared/records";
import { defineUtility, type UtilityInputs } from "../types";

export const id = "schema.compute";

export const configSchema = t.Object(
  {
    fields: t.Array(
      t.Object(
        {
          target: t.String({ minLength: 1, description: "path the result is written to (created when missing)" }),
          expression: t.String({ description: 'a template: "{{price * quantity}}" keeps the type, "{{first}} {{last}}" gives a string' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, description: "computed fields, evaluated in order; a later field sees earlier results" },
    ),
  },
  { additionalProperties: false },
);

export type ComputeConfig = Static<typeof configSchema>;

export function compute(primary: unknown, config: ComputeConfig, budget = unlimitedBudget()): unknown {
  const fields = config.fields.map(({ target, expression }, index) => ({
    path: parseConfigPath(target, `fields/${index}/target`, { single: true }),
    template: compileTemplate(expression, `fields/${index}/expression`),
  }));
  return mapRecords(primary, (record, index) => {
    const result = cloneJson(objectRecord(record, index, id));
    for (const { path, template } of fields) {
      const value = cloneJson(template.evaluate({ record: result, root: primary }, budget.work), budget);
      set(result, path, value, budget);
    }
    return result;
  });
}

export default defineUtility({
  id,
  name: "Compute fields",
  category: "schema",
  description: "Adds or overwrites fields computed from {{ }} expressions over each record, in order.",
  configSchema,
  amplifies: true,
  run(inputs: UtilityInputs, config, budget) {
    return compute(inputs.primary, config, budget);
  },
});
