// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "analysis.diff";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Diff",
  category: "analysis",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("analysis.diff is not implemented yet");
  },
});
