// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "convert.csv-to-json";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "CSV to JSON",
  category: "convert",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("convert.csv-to-json is not implemented yet");
  },
});
