/** The routes and headers of idempotency and export/import, as /openapi.json declares them. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

// test apps, worker threads and real servers take seconds on a loaded machine
setDefaultTimeout(60_000);

let t: TestApp;
let spec: any;
beforeAll(async () => {
  t = await createTestApp();
  spec = (await t.json("GET", "/openapi.json", { key: null })).body;
});
afterAll(() => t.close());

test.each([
  ["/api/v1/documents", "post"],
  ["/api/v1/utilities/{utilityId}", "post"],
  ["/api/v1/pipelines/run", "post"],
  ["/api/v1/pipelines/{id}/run", "post"],
])("%s %s declares the Idempotency-Key header and its 409 and 422", (path, method) => {
  const operation = spec.paths[path][method];
  const header = operation.parameters.find((parameter: any) => parameter.name.toLowerCase() === "idempotency-key");
  expect(header).toMatchObject({ in: "header", required: false, schema: { type: "string", minLength: 1, maxLength: 255 } });
  const success = operation.responses[path === "/api/v1/documents" ? "201" : "200"];
  expect(success.headers["Idempotent-Replayed"]).toEqual({ $ref: "#/components/headers/Idempotent-Replayed" });
  expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["409", "422", path === "/api/v1/documents" ? "201" : "200"]));
  expect(JSON.stringify(operation.responses["409"])).toContain("idempotency_in_progress");
  expect(JSON.stringify(operation.responses["422"])).toContain("idempotency_key_reused");
});

test("routes without Idempotency-Key do not declare it", () => {
  const parameters = spec.paths["/api/v1/documents/{id}"].put.parameters ?? [];
  expect(parameters.some((parameter: any) => parameter.name.toLowerCase() === "idempotency-key")).toBe(false);
});

test("export and import are declared with their NDJSON bodies and query", () => {
  const exported = spec.paths["/api/v1/export"].get;
  expect(exported.parameters.map((parameter: any) => parameter.name).sort()).toEqual(["deleted", "folder", "recursive"]);
  const imported = spec.paths["/api/v1/import"].post;
  // the body is NDJSON text; each line's schema is a named component (x-itemSchema, and the description says which)
  const ndjson = (media: any, line: string) => {
    expect(Object.keys(media)).toEqual(["application/x-ndjson"]);
    expect(media["application/x-ndjson"].schema.type).toBe("string");
    expect(media["application/x-ndjson"].schema.description).toContain(`Each line is one ${line}`);
    expect(media["application/x-ndjson"]["x-itemSchema"]).toEqual({ $ref: `#/components/schemas/${line}` });
  };
  ndjson(exported.responses["200"].content, "ExportLine");
  ndjson(imported.requestBody.content, "ImportLine");
  ndjson(imported.responses["200"].content, "ImportResult");
  expect(spec.components.schemas.ImportResult.anyOf.length).toBe(2);
  expect(JSON.stringify(imported.responses["415"])).toContain("unsupported_media_type");
});
