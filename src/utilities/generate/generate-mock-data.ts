// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "generate.generate-mock-data";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Generate Mock Data",
  category: "generate",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("generate.generate-mock-data is not implemented yet");
  },
});
