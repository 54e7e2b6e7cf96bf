// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "structure.copy-move";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Copy / Move",
  category: "structure",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("structure.copy-move is not implemented yet");
  },
});
