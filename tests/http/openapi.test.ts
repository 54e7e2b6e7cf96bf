/**
 * GET /openapi.json is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator and
 * every schema compiled by ajv in strict mode) that tells the truth about what routes take and answer.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import { createTestApp, type TestApp } from "../support/app";

// compiling every schema under ajv takes about a second, several on a loaded 2-core machine
setDefaultTimeout(60_000);

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

/** The schema of a problem response whose code is one of `codes`. */
const problemOf = (codes: string[]) => ({
  allOf: [
    { $ref: "#/components/schemas/Problem" },
    { type: "object", properties: { code: { type: "string", enum: codes } }, required: ["code"] },
  ],
});
const codesListed = (response: any): string[] =>
  response.content?.["application/problem+json"]?.schema?.allOf?.[1]?.properties?.code?.enum ?? [];

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
    // each distinct schema once (the problem schemas of many statuses are the same)
    const distinct = [...new Set(every.map((schema) => JSON.stringify(pointed(schema))))].map((json) => JSON.parse(json));
    const $defs = {
      ...pointed(document.components.schemas),
      ...Object.fromEntries(distinct.map((schema, index) => [`used${index}`, schema])),
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

  const WORKER_ROUTES = new Set(["runUtility", "runPipeline", "runSavedPipeline", "patchDocumentContent"]);

  test("public routes have no security; API routes declare 401 with WWW-Authenticate and 429 with Retry-After and RateLimit headers", () => {
    for (const path of ["/", "/health", "/ready", "/openapi.json", "/docs"]) expect(document.paths[path].get.security).toEqual([]);
    for (const op of operations.filter((op) => op.path.startsWith("/api/"))) {
      expect(op.spec.security).toEqual([{ bearerAuth: [] }]);
      expect(op.spec.responses[401].headers["WWW-Authenticate"].required).toBe(true);
      const tooMany = op.spec.responses[429];
      for (const header of ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"])
        expect(tooMany.headers[header].required).toBe(true);
      // the routes that may wait for a utility worker also answer 429 account_busy (the account's share of the pool)
      // (each utility's own run operation, `runSchemaCleanJson`, is a copy of runUtility)
      const reachesWorker = WORKER_ROUTES.has(op.spec.operationId) || (op.method === "post" && op.path.startsWith("/api/v1/utilities/"));
      const codes = reachesWorker ? ["account_busy"] : [];
      // the stream limits and the queued-jobs limit, before the shared ones
      const own = op.path === "/api/v1/events/stream" ? ["too_many_streams"] : op.spec.operationId === "createJob" ? ["too_many_jobs"] : [];
      expect(tooMany.content["application/problem+json"].schema).toEqual(
        problemOf([...codes, ...own, "rate_limited", "too_many_failed_authentications"]),
      );
    }
    expect(operations.filter((op) => WORKER_ROUTES.has(op.spec.operationId))).toHaveLength(WORKER_ROUTES.size);
  });

  test("every error status is a Problem in application/problem+json whose code is one of a listed few; 304 has no content", () => {
    for (const op of operations) {
      for (const [status, response] of Object.entries<any>(op.spec.responses)) {
        if (Number(status) >= 400) {
          const codes = codesListed(response);
          expect([op.spec.operationId, status, codes.length > 0]).toEqual([op.spec.operationId, status, true]);
          expect(response.content).toEqual({ "application/problem+json": { schema: problemOf(codes) } });
        }
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

  test("downloads declare Range and If-Range, 206 with Content-Range and 416 range_not_satisfiable with Content-Range", () => {
    const downloads = operations.filter((op) => op.spec.responses[206]);
    expect(downloads.map((op) => op.spec.operationId).sort()).toEqual([
      "downloadDocumentContent",
      "downloadDocumentVersion",
      "downloadThroughLink",
    ]);
    for (const { spec } of downloads) {
      const headers = spec.parameters.filter((parameter: any) => parameter.in === "header").map((parameter: any) => parameter.name);
      expect(headers).toEqual(expect.arrayContaining(["Range", "If-Range", "If-None-Match"]));
      expect(spec.responses[206].headers["Content-Range"].required).toBe(true);
      expect(Object.keys(spec.responses[206].headers)).toEqual(expect.arrayContaining(["ETag", "Accept-Ranges"]));
      expect(spec.responses[200].headers["Accept-Ranges"]).toEqual({ $ref: "#/components/headers/Accept-Ranges" });
      expect(spec.responses[416].headers["Content-Range"].required).toBe(true);
      expect(codesListed(spec.responses[416])).toEqual(["range_not_satisfiable"]);
    }
  });

  test("the patch route takes only JSON Patch (an array of operations) and JSON Merge Patch (an object)", () => {
    const body = document.paths["/api/v1/documents/{id}/content"].patch.requestBody.content;
    expect(Object.keys(body)).toEqual(["application/json-patch+json", "application/merge-patch+json"]);
    const { schemas } = document.components;
    const patch = schemas[body["application/json-patch+json"].schema.$ref.split("/").pop()];
    expect(patch.type).toBe("array");
    const shapes = patch.items.anyOf.map((ref: any) => schemas[ref.$ref.split("/").pop()]);
    expect(shapes.flatMap((shape: any) => shape.properties.op.enum).sort()).toEqual(["add", "copy", "move", "remove", "replace", "test"]);
    for (const shape of shapes) expect(shape.required).toEqual(expect.arrayContaining(["op", "path"]));
    expect(shapes.find((shape: any) => shape.properties.op.enum.includes("move")).required).toContain("from");
    expect(shapes.find((shape: any) => shape.properties.op.enum.includes("add")).required).toContain("value");
    expect(schemas[body["application/merge-patch+json"].schema.$ref.split("/").pop()]).toMatchObject({ type: "object" });
  });

  test("no component keeps a default on an optional property (generators would make it required); the description says it", () => {
    const found: string[] = [];
    const walk = (schema: any, where: string) => {
      if (schema === null || typeof schema !== "object") return;
      for (const [name, member] of Object.entries<any>(schema.properties ?? {})) {
        if (!(schema.required ?? []).includes(name) && member && "default" in member) found.push(`${where}.${name}`);
        walk(member, `${where}.${name}`);
      }
      for (const key of ["items", "additionalProperties"]) walk(schema[key], `${where}.${key}`);
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const part of schema[key] ?? []) walk(part, `${where}.${key}`);
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) walk(schema, name);
    expect(found).toEqual([]);
    expect(document.components.schemas.RunOutput.properties.return).toEqual({
      type: "boolean",
      description: "false leaves output out of the response (default: true)",
    });
    expect(document.components.schemas.RunOutput.required).toBeUndefined();
  });

  test("shared codes: token_in_query on every route with a bearer scheme, database_unavailable, database_busy and the auth codes on every API route", () => {
    for (const op of operations) {
      if (op.spec.security.length > 0)
        expect([op.spec.operationId, codesListed(op.spec.responses[400])]).toEqual([
          op.spec.operationId,
          expect.arrayContaining(["token_in_query"]),
        ]);
      if (!op.path.startsWith("/api/")) continue;
      expect(codesListed(op.spec.responses[503])).toContain("database_unavailable");
      expect(codesListed(op.spec.responses[503])).toContain("database_busy");
      expect(op.spec.responses[503].headers["Retry-After"].required).toBe(true);
      expect(codesListed(op.spec.responses[401])).toEqual(["unauthorized"]);
      expect(codesListed(op.spec.responses[500])).toContain("internal_error");
    }
    // a route's own codes and the shared ones in one enum
    const create = document.paths["/api/v1/documents"].post.responses;
    expect(codesListed(create[400])).toEqual(
      expect.arrayContaining(["validation_failed", "malformed_json", "body_required", "token_in_query", "invalid_idempotency_key"]),
    );
    expect(codesListed(create[409])).toEqual(["idempotency_in_progress", "idempotency_answer_not_kept"]);
    expect(codesListed(create[503])).toEqual(["content_store_unavailable", "database_unavailable", "database_busy"]);
    expect(codesListed(document.paths["/ready"].get.responses[503])).toEqual(["not_ready", "draining"]);
  });

  test("every listed code is one Kiln throws: a code in the source, never a word of a description", () => {
    const thrown = new Set(["validation_failed", "unauthorized", "forbidden"]); // validationError(), unauthorized(), forbidden()
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
      );
    const pattern =
      /(?:HttpError\(\s*\d{3},\s*|(?:badRequest|notFound)\(\s*|code: |\[\d{3}, |HttpError\(\s*\n\s*\d{3},\s*\n?\s*)"([a-z_]+)"/g;
    for (const file of sources(join(import.meta.dir, "../../src")))
      for (const match of readFileSync(file, "utf8").matchAll(pattern)) thrown.add(match[1]);
    const listed = new Set(operations.flatMap((op) => Object.values<any>(op.spec.responses).flatMap(codesListed)));
    expect([...listed].filter((code) => !thrown.has(code))).toEqual([]);
    expect(listed.size).toBeGreaterThan(40);
  });
});

describe("GET / and GET /docs, for a first visit", () => {
  test("GET / answers links to the reference, the document and the health checks, each of which answers without a key", async () => {
    const root = await t.json("GET", "/", { key: null });
    expect(root.status).toBe(200);
    expect(root.body.links).toEqual({ docs: "/docs", openapi: "/openapi.json", health: "/health", ready: "/ready", api: "/api/v1" });
    for (const path of [root.body.links.docs, root.body.links.openapi, root.body.links.health, root.body.links.ready])
      expect([path, (await t.request("GET", path, { key: null })).status]).toEqual([path, 200]);
  });

  test("the /docs page carries its own icon (no /favicon.ico request) and preselects the bearer scheme", async () => {
    const page = await (await t.request("GET", "/docs", { key: null })).text();
    expect(page).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
    expect(page).toContain('authentication: { preferredSecurityScheme: "bearerAuth" }');
    expect(document.components.securitySchemes.bearerAuth).toBeDefined();
  });
});
