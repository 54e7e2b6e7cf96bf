// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "analysis.aggregate";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Aggregate",
  category: "analysis",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("analysis.aggregate is not implemented yet");
  },
});
