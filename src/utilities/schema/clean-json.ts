// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "schema.clean-json";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Clean JSON",
  category: "cleanup",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("schema.clean-json is not implemented yet");
  },
});
