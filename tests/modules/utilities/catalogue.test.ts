import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const SPEC_IDS = [
  "convert.csv-to-json",
  "convert.json-to-csv",
  "convert.add-localization",
  "structure.find-replace",
  "merge.deep-merge",
  "structure.flatten-nest",
  "structure.restructure",
  "structure.pick-fields",
  "structure.remove-fields",
  "structure.copy-move",
  "schema.normalize",
  "schema.clean-json",
  "schema.truncate",
  "schema.compute",
  "analysis.aggregate",
  "analysis.summarize",
  "analysis.diff",
  "cleanup.format-values",
  "cleanup.redact",
  "cleanup.map-values",
  "generate.generate-mock-data",
  "generate.filter",
];

describe("GET /api/v1/utilities", () => {
  test("lists every utility of the spec once, with its config JSON Schema", async () => {
    const res = await t.json("GET", "/api/v1/utilities");
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.utilities.map((utility: { id: string }) => utility.id).sort()).toEqual([...SPEC_IDS].sort());
    for (const utility of res.body.utilities) {
      expect(Object.keys(utility)).toEqual(["id", "name", "category", "description", "configSchema"]);
      expect(utility.configSchema.type).toBe("object");
    }
  });

  test("one utility: defaults are in the schema, and fields with a default are not listed as required", async () => {
    const res = await t.json("GET", "/api/v1/utilities/merge.deep-merge");
    expect(res.status).toBe(200);
    expect(res.body.utility).toMatchObject({ id: "merge.deep-merge", name: "Deep Merge", category: "merge" });
    const schema = res.body.utility.configSchema;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.conflictStrategy.default).toBe("deepMerge");
    expect(schema.properties.arrayStrategy.default).toBe("replace");
    expect(schema.required).toBeUndefined();
    const clean = await t.json("GET", "/api/v1/utilities/schema.clean-json");
    expect(clean.body.utility).toMatchObject({ name: "Clean JSON", category: "cleanup" });
    expect(clean.body.utility.configSchema.properties.removeEmptyObjects.default).toBe(false);
  });

  test("an alias answers with the entry it reaches; an unknown id is 404 utility_not_found", async () => {
    expect((await t.json("GET", "/api/v1/utilities/compare.json-diff")).body.utility.id).toBe("analysis.diff");
    const missing = await t.json("GET", "/api/v1/utilities/nope.nothing");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("utility_not_found");
  });

  test("needs a key with the utilities permission", async () => {
    expect((await t.json("GET", "/api/v1/utilities", { key: null })).status).toBe(401);
    const { key } = await t.newAccount({ permissions: ["documents"] });
    expect((await t.json("GET", "/api/v1/utilities", { key })).status).toBe(403);
  });

  test("the catalogue and the execution route, with its request body, are in the OpenAPI document", async () => {
    const { body } = await t.json("GET", "/openapi.json", { key: null });
    expect(body.paths["/api/v1/utilities"].get).toBeDefined();
    const single = body.paths["/api/v1/utilities/{utilityId}"];
    expect(single.get).toBeDefined();
    expect(single.post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/UtilityRun" });
    expect(body.components.schemas.UtilityRun.required).toEqual(["inputs"]);
    expect(Object.keys(body.components.schemas.UtilityRun.properties.inputs.properties)).toEqual([
      "primary",
      "primaryDocumentId",
      "secondary",
      "secondaryDocumentId",
    ]);
    expect(Object.keys(body.components.schemas.UtilityRun.properties)).toEqual(["inputs", "config", "output"]);
    expect(single.post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/UtilityOutput" });
    expect(body.components.schemas.UtilityOutput.required).toEqual(["success", "durationMs", "creditsUsed"]);
  });
});
