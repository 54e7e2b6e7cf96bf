// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "analysis.summarize";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Summarize",
  category: "analysis",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("analysis.summarize is not implemented yet");
  },
});
