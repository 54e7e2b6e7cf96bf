// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "convert.json-to-csv";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "JSON to CSV",
  category: "convert",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("convert.json-to-csv is not implemented yet");
  },
});
