// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "structure.restructure";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Restructure",
  category: "structure",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("structure.restructure is not implemented yet");
  },
});
