/**
 * GET /openapi.json is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator and
 * every schema compiled by ajv in strict mode) that tells the truth about what routes take and answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
let document: any;
const operations: { path: string; method: string; spec: any }[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const response = await t.request("GET", "/openapi.json", { key: null });
  expect(response.status).toBe(200);
  document = await response.json();
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, spec] of Object.entries<any>(item)) operations.push({ path, method, spec });
  }
  const statuses = operations.reduce((sum, op) => sum + Object.keys(op.spec.responses).length, 0);
  console.log(`openapi: ${operations.length} operations, ${statuses} statuses declared`);
});
afterAll(async () => {
  await t.close();
});

/** Every JSON Schema in the document: components and every parameter, body, response and header schema. */
function schemasOf(value: unknown, found: unknown[] = [], key = ""): unknown[] {
  if (value === null || typeof value !== "object") return found;
  if (key === "schema") found.push(value);
  else for (const [name, member] of Object.entries(value)) schemasOf(member, found, name);
  return found;
}

describe("GET /openapi.json", () => {
  test("passes the OpenAPI 3.1 schema validator", async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toStartWith("3.1.");
    expect(document.servers.length).toBeGreaterThan(0);
  });

  test("every schema compiles under ajv strict mode (no non-standard keyword)", () => {
    const pointed = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "#/$defs/"));
    const every = [...schemasOf(document.paths), ...schemasOf(document.components.headers)];
    const $defs = {
      ...pointed(document.components.schemas),
      ...Object.fromEntries(every.map((schema, index) => [`used${index}`, pointed(schema)])),
    };
    // One schema holding them all as $defs: ajv compiles and checks each definition, refs included.
    expect(() =>
      new Ajv2020({ strict: true, allowUnionTypes: true }).compile({
        $defs,
        anyOf: Object.keys($defs).map((name) => ({ $ref: `#/$defs/${name}` })),
      }),
    ).not.toThrow();
    expect(every.length).toBeGreaterThan(50);
  });

  test("readable, unique operation ids on every operation", () => {
    const ids = operations.map((op) => op.spec.operationId);
    expect(ids.filter((id) => typeof id !== "string" || !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain("createDocument");
  });

  test("public routes have no security; API routes declare 401 with WWW-Authenticate and 429 with Retry-After and RateLimit headers", () => {
    for (const path of ["/health", "/ready", "/openapi.json", "/docs"]) expect(document.paths[path].get.security).toEqual([]);
    for (const op of operations.filter((op) => op.path.startsWith("/api/"))) {
      expect(op.spec.security).toEqual([{ bearerAuth: [] }]);
      expect(op.spec.responses[401].headers["WWW-Authenticate"].required).toBe(true);
      const tooMany = op.spec.responses[429];
      for (const header of ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"])
        expect(tooMany.headers[header].required).toBe(true);
      expect(tooMany.content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
    }
  });

  test("every error status is a Problem in application/problem+json; 304 has no content", () => {
    for (const op of operations) {
      for (const [status, response] of Object.entries<any>(op.spec.responses)) {
        if (Number(status) >= 400)
          expect(response.content).toEqual({ "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } });
        if (status === "304") {
          expect(response.content).toBeUndefined();
          expect(response.headers.ETag.required).toBe(true);
        }
      }
    }
    expect(document.components.schemas.Problem.required).toEqual(expect.arrayContaining(["code", "status", "detail", "requestId"]));
  });

  test("request bodies: JSON schemas by name, the raw content route by media type", () => {
    const body = (path: string, method: string) => document.paths[path][method].requestBody;
    expect(body("/api/v1/documents", "post").content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CreateDocument" });
    expect(body("/api/v1/documents/{id}", "put").content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/UpdateDocument",
    });
    expect(body("/api/v1/admin/accounts", "post").content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CreateAccount",
    });
    expect(body("/api/v1/admin/accounts/{id}", "patch").content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/UpdateAccount",
    });
    expect(body("/api/v1/admin/keys", "post").content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CreateKey" });
    expect(body("/api/v1/utilities/{utilityId}", "post").content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/UtilityRun",
    });
    expect(Object.keys(body("/api/v1/documents/{id}/content", "put").content)).toEqual(["application/json"]);
    for (const op of operations.filter((op) => op.spec.requestBody)) {
      expect(Object.keys(op.spec.requestBody.content)).not.toContain("multipart/form-data");
    }
  });

  test("named component schemas, ETag/Location headers, If-Match/If-None-Match parameters, an integer limit", () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["Document", "Account", "Key", "Usage", "Problem", "Utility"]),
    );
    const documents = document.paths["/api/v1/documents"];
    expect(Object.keys(documents.post.responses[201].headers)).toEqual(expect.arrayContaining(["Location", "ETag"]));
    const limit = documents.get.parameters.find((parameter: any) => parameter.name === "limit");
    expect(limit.schema.type).toBe("integer");
    const ifMatch = (path: string, method: string) =>
      document.paths[path][method].parameters.find((parameter: any) => parameter.name === "If-Match");
    expect(ifMatch("/api/v1/documents/{id}", "put").in).toBe("header");
    expect(ifMatch("/api/v1/documents/{id}/content", "put").in).toBe("header");
    expect(document.paths["/api/v1/documents/{id}"].put.responses[412]).toBeDefined();
    const download = document.paths["/api/v1/documents/{id}/content"].get;
    expect(download.parameters.some((parameter: any) => parameter.name === "If-None-Match")).toBe(true);
    expect(Object.keys(download.responses[200].headers)).toEqual(expect.arrayContaining(["ETag", "Content-Disposition"]));
  });
});
