// PLACEHOLDER: replaced by the utility's implementation (issues 4–6).
import { t } from "elysia";
import { defineUtility, UtilityError } from "../types";

export const id = "merge.deep-merge";

export const configSchema = t.Object({}, { additionalProperties: false });

export default defineUtility({
  id,
  name: "Deep Merge",
  category: "merge",
  description: "Not implemented yet.",
  configSchema,
  run() {
    throw new UtilityError("merge.deep-merge is not implemented yet");
  },
});
