// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "cleanup.map-values";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Map Values",
  category: "cleanup",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("cleanup.map-values is not implemented yet");
  },
});
