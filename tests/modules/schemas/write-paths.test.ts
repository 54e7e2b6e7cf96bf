/**
 * Every path that writes content into a governed folder, in both modes: reject answers 422
 * schema_violation (schema id and version, every error) and writes nothing; warn stores, answers
 * `warnings` and Kiln-Schema-Warnings, and records a schema.violated event.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ORDER = { type: "object", required: ["id"], properties: { id: { type: "integer" } } };
const VALID = { id: 1 };
const INVALID = { id: "one" };
const ERROR = { path: "/id", keyword: "type", schemaPath: "/properties/id/type" };

interface Setup {
  key: string;
  schemaId: string;
}

async function governed(mode: "reject" | "warn"): Promise<Setup> {
  const { key } = await t.newAccount();
  const { body } = await t.json("POST", "/api/v1/schemas", { key, body: { name: "order", schema: ORDER, folders: ["orders"], mode } });
  return { key, schemaId: body.schema.id };
}

async function stored(key: string, content: unknown, folder = "orders"): Promise<{ id: string; etag: string }> {
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "doc", folder, content } });
  expect(created.status).toBe(201);
  const id = created.body.document.id;
  return { id, etag: (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).headers.get("etag")! };
}

const contentOf = async (key: string, id: string) => (await t.json("GET", `/api/v1/documents/${id}/content`, { key })).body;

function expectViolation(answer: { status: number; body: any }, setup: Setup, version = 1) {
  expect(answer.status).toBe(422);
  expect(answer.body).toMatchObject({ code: "schema_violation", status: 422, schema: { id: setup.schemaId, version } });
  expect(answer.body.errors).toEqual([expect.objectContaining(ERROR)]);
}

function expectWarned(answer: { status: number; headers: Headers; body: any }) {
  expect(answer.status).toBeLessThan(300);
  expect(answer.headers.get("kiln-schema-warnings")).toBe("1");
  expect(answer.body.warnings).toEqual([expect.objectContaining(ERROR)]);
}

/** Each write path: `write` makes the write with invalid content and returns its answer; `stored` reads what is there after. */
const PATHS: {
  name: string;
  prepare?: (key: string) => Promise<{ id: string; etag: string }>;
  write: (key: string, id: string, etag: string) => Promise<{ status: number; headers: Headers; body: any }>;
  after: (key: string, id: string) => Promise<unknown>;
}[] = [
  {
    name: "create",
    write: (key) => t.json("POST", "/api/v1/documents", { key, body: { name: "doc", folder: "orders/2026", content: INVALID } }),
    after: async (key) => (await t.json("GET", "/api/v1/documents?folder=orders/2026", { key })).body.documents.length,
  },
  {
    name: "content replace",
    prepare: (key) => stored(key, VALID),
    write: (key, id) => t.json("PUT", `/api/v1/documents/${id}/content`, { key, body: INVALID }),
    after: (key, id) => contentOf(key, id),
  },
  {
    name: "JSON Patch",
    prepare: (key) => stored(key, VALID),
    write: (key, id) =>
      t.json("PATCH", `/api/v1/documents/${id}/content`, {
        key,
        rawBody: JSON.stringify([{ op: "replace", path: "/id", value: "one" }]),
        headers: { "content-type": "application/json-patch+json" },
      }),
    after: (key, id) => contentOf(key, id),
  },
  {
    name: "merge patch",
    prepare: (key) => stored(key, VALID),
    write: (key, id) =>
      t.json("PATCH", `/api/v1/documents/${id}/content`, {
        key,
        rawBody: JSON.stringify({ id: "one" }),
        headers: { "content-type": "application/merge-patch+json" },
      }),
    after: (key, id) => contentOf(key, id),
  },
  {
    name: "version restore",
    prepare: async (key) => {
      const doc = await stored(key, INVALID, "drafts");
      await t.json("PUT", `/api/v1/documents/${doc.id}/content`, { key, body: VALID });
      await t.json("PUT", `/api/v1/documents/${doc.id}`, { key, body: { folder: "orders" } });
      return doc;
    },
    write: (key, id) => t.json("POST", `/api/v1/documents/${id}/versions/1/restore`, { key }),
    after: (key, id) => contentOf(key, id),
  },
  {
    name: "a move into the governed folder",
    prepare: (key) => stored(key, INVALID, "drafts"),
    write: (key, id) => t.json("PUT", `/api/v1/documents/${id}`, { key, body: { folder: "orders/eu" } }),
    after: async (key, id) => (await t.json("GET", `/api/v1/documents/${id}`, { key })).body.document.folder,
  },
  {
    name: "a saved utility output (saveAs)",
    write: (key) =>
      t.json("POST", "/api/v1/utilities/schema.clean-json", {
        key,
        body: { inputs: { primary: INVALID }, output: { saveAs: { name: "out", folder: "orders" } } },
      }),
    after: async (key) => (await t.json("GET", "/api/v1/documents?folder=orders", { key })).body.documents.length,
  },
  {
    name: "a saved utility output (saveTo)",
    prepare: (key) => stored(key, VALID),
    write: (key, id) =>
      t.json("POST", "/api/v1/utilities/schema.clean-json", { key, body: { inputs: { primary: INVALID }, output: { saveTo: id } } }),
    after: (key, id) => contentOf(key, id),
  },
  {
    name: "a saved pipeline output",
    write: (key) =>
      t.json("POST", "/api/v1/pipelines/run", {
        key,
        body: {
          steps: [{ utility: "schema.clean-json" }],
          inputs: { primary: INVALID },
          output: { saveAs: { name: "out", folder: "orders" } },
        },
      }),
    after: async (key) => (await t.json("GET", "/api/v1/documents?folder=orders", { key })).body.documents.length,
  },
];

describe("mode reject: 422 schema_violation and nothing written", () => {
  for (const path of PATHS)
    test(path.name, async () => {
      const setup = await governed("reject");
      const doc = path.prepare ? await path.prepare(setup.key) : { id: "", etag: "" };
      const before = await path.after(setup.key, doc.id);
      const answer = await path.write(setup.key, doc.id, doc.etag);
      expectViolation(answer, setup);
      expect(await path.after(setup.key, doc.id)).toEqual(before);
    });
});

describe("mode warn: stored, with warnings, Kiln-Schema-Warnings and an event", () => {
  for (const path of PATHS)
    test(path.name, async () => {
      const setup = await governed("warn");
      const doc = path.prepare ? await path.prepare(setup.key) : { id: "", etag: "" };
      const before = await path.after(setup.key, doc.id);
      const answer = await path.write(setup.key, doc.id, doc.etag);
      expectWarned(answer);
      expect(await path.after(setup.key, doc.id)).not.toEqual(before);
      const events = await t.json("GET", "/api/v1/events?type=schema.violated", { key: setup.key });
      expect(events.body.events).toEqual([
        expect.objectContaining({
          type: "schema.violated",
          data: expect.objectContaining({
            schema: { id: setup.schemaId, version: 1 },
            warningCount: 1,
            warnings: [expect.objectContaining(ERROR)],
          }),
        }),
      ]);
    });
});

/** The content files in the store (every version of every document). */
const contentFiles = () => [...new Bun.Glob("**/*.json").scanSync(join(t.config.dataDir, "content"))].length;

// A node remembers the accounts it found binding no folder and then writes without reading the bindings;
// the write's statement refuses (schemas_changed) once the account binds one, and the write checks again.
describe("a folder bound after this node found the account without schemas", () => {
  for (const mode of ["reject", "warn"] as const)
    for (const path of PATHS)
      test(`${mode}: ${path.name}`, async () => {
        const { key } = await t.newAccount();
        const doc = path.prepare ? await path.prepare(key) : { id: "", etag: "" };
        await stored(key, INVALID, "elsewhere");
        const bound = await t.json("POST", "/api/v1/schemas", { key, body: { name: "order", schema: ORDER, folders: ["orders"], mode } });
        expect(bound.status).toBe(201);
        const setup = { key, schemaId: bound.body.schema.id };
        const before = await path.after(key, doc.id);
        const files = contentFiles();
        const answer = await path.write(key, doc.id, doc.etag);
        if (mode === "warn") {
          expectWarned(answer);
          expect(await path.after(key, doc.id)).not.toEqual(before);
          return;
        }
        expectViolation(answer, setup);
        expect(await path.after(key, doc.id)).toEqual(before);
        expect(contentFiles()).toBe(files);
      });
});

describe("which schema governs", () => {
  test("the nearest bound ancestor; valid content and ungoverned folders pass untouched", async () => {
    const setup = await governed("reject");
    await t.json("POST", "/api/v1/schemas", { key: setup.key, body: { name: "loose", schema: true, folders: ["orders/archive"] } });
    expect(
      (await t.json("POST", "/api/v1/documents", { key: setup.key, body: { name: "a", folder: "orders/archive/2019", content: INVALID } }))
        .status,
    ).toBe(201);
    expect(
      (await t.json("POST", "/api/v1/documents", { key: setup.key, body: { name: "b", folder: "ordersx", content: INVALID } })).status,
    ).toBe(201);
    const valid = await t.json("POST", "/api/v1/documents", { key: setup.key, body: { name: "c", folder: "orders/x", content: VALID } });
    expect(valid.status).toBe(201);
    expect(valid.headers.get("kiln-schema-warnings")).toBeNull();
    expect(valid.body.warnings).toBeUndefined();
  });

  test("a new schema version applies to the next write; the 422 names it", async () => {
    const setup = await governed("reject");
    await t.json("PATCH", `/api/v1/schemas/${setup.schemaId}`, {
      key: setup.key,
      body: { schema: { ...ORDER, required: ["id", "total"] } },
    });
    const answer = await t.json("POST", "/api/v1/documents", { key: setup.key, body: { name: "d", folder: "orders", content: VALID } });
    expect(answer.status).toBe(422);
    expect(answer.body.schema).toEqual({ id: setup.schemaId, version: 2 });
    expect(answer.body.errors).toEqual([
      { path: "", keyword: "required", schemaPath: "/required", message: 'must have the property "total"' },
    ]);
  });

  test("import: a failing line fails with its errors, the others go on", async () => {
    const setup = await governed("reject");
    const lines = [VALID, INVALID, VALID]
      .map((content, i) => JSON.stringify({ document: { name: `l${i}`, folder: "orders" }, content }))
      .join("\n");
    const response = await t.request("POST", "/api/v1/import", {
      key: setup.key,
      rawBody: lines,
      headers: { "content-type": "application/x-ndjson" },
    });
    const results = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results[0].id).toMatch(/^doc_/);
    expect(results[1].error).toMatchObject({
      code: "schema_violation",
      schema: { id: setup.schemaId, version: 1 },
      errors: [expect.objectContaining(ERROR)],
    });
    expect(results[2].id).toMatch(/^doc_/);
    expect((await t.json("GET", "/api/v1/documents?folder=orders", { key: setup.key })).body.documents).toHaveLength(2);
  });

  test("large content is validated off the main thread with the same answer", async () => {
    const setup = await governed("reject");
    const big = { id: "one", pad: "x".repeat(200_000) };
    expectViolation(
      await t.json("POST", "/api/v1/documents", { key: setup.key, body: { name: "big", folder: "orders", content: big } }),
      setup,
    );
    const ok = await t.json("POST", "/api/v1/documents", {
      key: setup.key,
      body: { name: "big", folder: "orders", content: { ...big, id: 2 } },
    });
    expect(ok.status).toBe(201);
  });
});
