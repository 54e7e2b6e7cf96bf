// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "generate.filter";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Filter",
  category: "generate",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("generate.filter is not implemented yet");
  },
});
