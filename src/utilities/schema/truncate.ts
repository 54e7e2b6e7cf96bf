// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "schema.truncate";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Truncate",
  category: "schema",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("schema.truncate is not implemented yet");
  },
});
