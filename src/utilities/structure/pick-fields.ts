// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "structure.pick-fields";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Pick Fields",
  category: "structure",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("structure.pick-fields is not implemented yet");
  },
});
