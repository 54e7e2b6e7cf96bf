/**
 * structure.remove-fields: removes the given paths (wildcards allowed) from each record; paths that do
 * not exist are ignored. With removeEmptyParents, objects that the removal leaves empty are dropped as
 * well, up the chain (objects already empty before are kept; the record itself always stays).
 *
 * Output bound: at most the input's size (members are only removed); no budget needed.
 */
import { type Static, Type as t } from "@sinclair/typebox";
import { PathSet, parsePaths, removeAll } from "../shared/paths";
import { cloneJson, type Defaulted, mapRecords, objectRecord } from "../shared/records";
import { defineUtility, UtilityConfigError, type UtilityInputs } from "../types";

export const id = "structure.remove-fields";

export const configSchema = t.Object(
  {
    paths: t.Array(t.String(), { description: "paths to remove" }),
    removeEmptyParents: t.Optional(t.Boolean({ default: false, description: "drop objects that become empty" })),
  },
  { additionalProperties: false },
);

export type RemoveFieldsConfig = Defaulted<Static<typeof configSchema>, "removeEmptyParents">;

export function removeFields(primary: unknown, config: RemoveFieldsConfig): unknown {
  const paths = parsePaths(config.paths, "paths");
  paths.forEach((path, index) => {
    if (path.length === 0) throw new UtilityConfigError(`paths/${index}`, "the record itself cannot be removed");
  });
  const pathSet = new PathSet(paths);
  return mapRecords(primary, (record, index) => {
    const copy = cloneJson(objectRecord(record, index, id));
    removeAll(copy, pathSet, { removeEmptyParents: config.removeEmptyParents });
    return copy;
  });
}

export default defineUtility({
  id,
  name: "Remove Fields",
  category: "structure",
  description: "Removes the given paths (wildcards allowed) from each record.",
  configSchema,
  run: (inputs: UtilityInputs, config) => removeFields(inputs.primary, config as RemoveFieldsConfig),
});
