/** The schemas API: create, read (older versions too), change, delete, refusals by pointer, limits, isolation. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SCHEMA_MAX_BYTES: "4096", SCHEMA_MAX_DEPTH: "8" });
});
afterAll(async () => {
  await t.close();
});

const SCHEMAS = "/api/v1/schemas";
const ORDER = { type: "object", required: ["id"], properties: { id: { type: "integer" } } };

describe("create, read, change, delete", () => {
  test("a new schema text is the next version; older versions stay readable, numbers as written", async () => {
    const { key } = await t.newAccount();
    const created = await t.json("POST", SCHEMAS, { key, body: { name: "order", schema: ORDER, folders: ["/orders/"] } });
    expect(created.status).toBe(201);
    expect(created.body.schema).toMatchObject({ name: "order", version: 1, folders: ["orders"], mode: "reject" });
    const id = created.body.schema.id;
    expect(id).toMatch(/^sch_/);
    expect(created.headers.get("location")).toBe(`${SCHEMAS}/${id}`);
    expect(created.body.schema.uri).toBe(`urn:kiln:schema:${id}`);

    const text = '{"type":"object","properties":{"id":{"maximum":18446744073709551615}}}';
    const patched = await t.request("PATCH", `${SCHEMAS}/${id}`, { key, rawBody: `{"schema":${text},"mode":"warn"}` });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { schema: unknown }).schema).toMatchObject({ version: 2, mode: "warn", folders: ["orders"] });

    const current = await t.request("GET", `${SCHEMAS}/${id}`, { key });
    expect(await current.text()).toContain(`"version":2,"folders":["orders"],"mode":"warn"`);
    const currentBody = await t.request("GET", `${SCHEMAS}/${id}`, { key }).then((r) => r.text());
    expect(currentBody.endsWith(`"schema":${text}}}`)).toBe(true);
    const first = await t.json("GET", `${SCHEMAS}/${id}?version=1`, { key });
    expect(first.status).toBe(200);
    expect(first.body.schema.version).toBe(1);
    expect(first.body.schema.schema).toEqual(ORDER);
    expect((await t.json("GET", `${SCHEMAS}/${id}?version=3`, { key })).body.code).toBe("schema_not_found");

    const listed = await t.json("GET", SCHEMAS, { key });
    expect(listed.body.schemas.map((s: { id: string }) => s.id)).toEqual([id]);
  });

  test("a folder has at most one schema; delete is refused while bound, then deletes", async () => {
    const { key } = await t.newAccount();
    const a = await t.json("POST", SCHEMAS, { key, body: { name: "a", schema: true, folders: ["x"] } });
    const b = await t.json("POST", SCHEMAS, { key, body: { name: "b", schema: true, folders: ["x"] } });
    expect(b.status).toBe(409);
    expect(b.body.code).toBe("schema_folder_taken");
    const refused = await t.json("DELETE", `${SCHEMAS}/${a.body.schema.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("schema_in_use");
    expect((await t.json("PATCH", `${SCHEMAS}/${a.body.schema.id}`, { key, body: { folders: [] } })).body.schema.folders).toEqual([]);
    expect((await t.json("DELETE", `${SCHEMAS}/${a.body.schema.id}`, { key })).status).toBe(200);
    expect((await t.json("GET", `${SCHEMAS}/${a.body.schema.id}`, { key })).status).toBe(404);
  });
});

describe("refused at save with 400 naming the pointer", () => {
  const refusal = async (schema: unknown, raw?: string) => {
    const { key } = await t.newAccount();
    const answer = raw
      ? await t.json("POST", SCHEMAS, { key, rawBody: `{"name":"s","schema":${raw}}` })
      : await t.json("POST", SCHEMAS, { key, body: { name: "s", schema } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("schema_invalid");
    return answer.body.errors.map((e: { path: string }) => e.path);
  };

  test("a keyword of the wrong type", async () => {
    expect(await refusal({ properties: { a: { minLength: "3" } } })).toContain("/schema/properties/a/minLength");
  });
  test("a pattern the linear-time engine cannot run", async () => {
    expect(await refusal({ properties: { a: { pattern: "(a)\\1" } } })).toEqual(["/schema/properties/a/pattern"]);
    expect(await refusal({ patternProperties: { "(?=x)": true } })).toEqual(["/schema/patternProperties/(?=x)"]);
  });
  test("a $ref to anything but itself, a meta-schema or the account's schemas: nothing is fetched", async () => {
    expect(await refusal({ $ref: "https://example.com/schema.json" })).toEqual(["/schema/$ref"]);
    expect(await refusal({ $ref: "#/$defs/missing" })).toEqual(["/schema/$ref"]);
  });
  test("another draft's $schema is refused clearly", async () => {
    expect(await refusal({ $schema: "http://json-schema.org/draft-07/schema#", type: "object" })).toEqual(["/schema/$schema"]);
  });
  test("too large, too deep, not a schema", async () => {
    expect(await refusal({ enum: ["x".repeat(5000)] })).toEqual(["/schema"]);
    let deep: unknown = true;
    for (let i = 0; i < 10; i++) deep = { items: deep };
    expect(await refusal(deep)).toEqual([`/schema${"/items".repeat(9)}`]);
    expect(await refusal(42)).toEqual(["/schema"]);
  });
});

describe("per-account bounds", () => {
  test("at most 100 folders per schema and 100 schemas per account", async () => {
    const { key } = await t.newAccount();
    const folders = Array.from({ length: 101 }, (_, i) => `f${i}`);
    const tooMany = await t.json("POST", SCHEMAS, { key, body: { name: "s", schema: true, folders } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors).toEqual([{ path: "/folders", message: "a schema governs at most 100 folders" }]);
    for (let i = 0; i < 100; i++) expect((await t.json("POST", SCHEMAS, { key, body: { name: `s${i}`, schema: true } })).status).toBe(201);
    const past = await t.json("POST", SCHEMAS, { key, body: { name: "one more", schema: true } });
    expect(past.status).toBe(409);
    expect(past.body.code).toBe("schema_limit_reached");
  });
});

describe("references between an account's schemas", () => {
  test("by $id or by urn:kiln:schema:<id>, and never to another account's", async () => {
    const { key } = await t.newAccount();
    const other = await t.newAccount();
    const address = await t.json("POST", SCHEMAS, {
      key,
      body: { name: "address", schema: { $id: "https://schemas.example/address", type: "object", required: ["city"] } },
    });
    expect(address.status).toBe(201);
    const byId = await t.json("POST", SCHEMAS, {
      key,
      body: { name: "a", schema: { properties: { to: { $ref: "https://schemas.example/address" } } } },
    });
    expect(byId.status).toBe(201);
    const byUrn = await t.json("POST", SCHEMAS, { key, body: { name: "b", schema: { $ref: byId.body.schema.uri } } });
    expect(byUrn.status).toBe(201);
    const dry = await t.json("POST", `${SCHEMAS}/${byUrn.body.schema.id}/validate`, { key, body: { content: { to: {} } } });
    expect(dry.body).toMatchObject({ success: true, valid: false, errors: [{ path: "/to", keyword: "required" }] });
    expect(dry.body.errors[0].schemaPath).toBe("/$ref/properties/to/$ref/required");

    const foreign = await t.json("POST", SCHEMAS, {
      key: other.key,
      body: { name: "c", schema: { $ref: "https://schemas.example/address" } },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0].path).toBe("/schema/$ref");
  });
});

describe("tenant isolation", () => {
  test("another account's schema answers 404 everywhere", async () => {
    const owner = await t.newAccount();
    const stranger = await t.newAccount();
    const { body } = await t.json("POST", SCHEMAS, { key: owner.key, body: { name: "s", schema: ORDER, folders: ["shared-name"] } });
    const id = body.schema.id;
    for (const [method, path, payload] of [
      ["GET", `${SCHEMAS}/${id}`, undefined],
      ["PATCH", `${SCHEMAS}/${id}`, { mode: "warn" }],
      ["DELETE", `${SCHEMAS}/${id}`, undefined],
      ["POST", `${SCHEMAS}/${id}/validate`, { content: {} }],
    ] as const) {
      const answer = await t.json(method, path, { key: stranger.key, body: payload });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe("schema_not_found");
    }
    expect((await t.json("GET", SCHEMAS, { key: stranger.key })).body.schemas).toEqual([]);
    // the same folder name in another account is not governed
    const created = await t.json("POST", "/api/v1/documents", {
      key: stranger.key,
      body: { name: "d", folder: "shared-name", content: { id: "x" } },
    });
    expect(created.status).toBe(201);
  });

  test("a key without the documents permission is refused", async () => {
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    expect((await t.json("GET", SCHEMAS, { key })).status).toBe(403);
  });
});
