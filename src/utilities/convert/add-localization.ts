// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "convert.add-localization";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Add Localization",
  category: "localization",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("convert.add-localization is not implemented yet");
  },
});
