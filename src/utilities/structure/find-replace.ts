// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "structure.find-replace";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Find & Replace",
  category: "convert",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("structure.find-replace is not implemented yet");
  },
});
