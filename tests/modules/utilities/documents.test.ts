/** Utility runs on stored documents (primaryDocumentId / secondaryDocumentId) and saved outputs (saveAs, saveTo, return: false). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const run = (utilityId: string, body: unknown, key?: string) => t.json("POST", `/api/v1/utilities/${utilityId}`, { body, key });
const creditsUsed = async (key: string) => (await t.json("GET", "/api/v1/usage", { key })).body.credits.used as number;
const store = async (key: string, content: unknown, name = "doc.json") =>
  (await t.json("POST", "/api/v1/documents", { key, body: { name, content } })).body.document;
const contentOf = async (key: string, id: string) => (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).text();

describe("stored documents as inputs", () => {
  test("primaryDocumentId and secondaryDocumentId run on the stored content", async () => {
    const { key } = await t.newAccount();
    const a = await store(key, { a: 1, nested: { x: 1 } });
    const b = await store(key, { b: 2, nested: { y: 2 } });
    const res = await run("merge.deep-merge", { inputs: { primaryDocumentId: a.id, secondaryDocumentId: b.id } }, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      output: { a: 1, nested: { x: 1, y: 2 }, b: 2 },
      durationMs: expect.any(Number),
      creditsUsed: 1,
    });
    const mixed = await run("merge.deep-merge", { inputs: { primary: { c: 3 }, secondaryDocumentId: b.id } }, key);
    expect(mixed.body.output).toEqual({ c: 3, b: 2, nested: { y: 2 } });
  });

  test("a large stored document runs in a worker", async () => {
    const { key } = await t.newAccount();
    const records = Array.from({ length: 5000 }, (_, id) => ({ id, note: id % 2 ? null : "kept" }));
    const doc = await store(key, records);
    const res = await run("schema.clean-json", { inputs: { primaryDocumentId: doc.id } }, key);
    expect(res.status).toBe(200);
    expect(res.body.output[1]).toEqual({ id: 1 });
  });

  test("both of a pair: 400 naming the field", async () => {
    const { key } = await t.newAccount();
    const doc = await store(key, {});
    const both = await run("schema.clean-json", { inputs: { primary: {}, primaryDocumentId: doc.id } }, key);
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([{ path: "/inputs/primaryDocumentId", message: expect.any(String) }]);
    const secondaries = await run("merge.deep-merge", { inputs: { primary: {}, secondary: {}, secondaryDocumentId: doc.id } }, key);
    expect(secondaries.body.errors).toEqual([{ path: "/inputs/secondaryDocumentId", message: expect.any(String) }]);
    expect((await run("schema.clean-json", { inputs: { primaryDocumentId: 12 } }, key)).body.errors[0].path).toBe(
      "/inputs/primaryDocumentId",
    );
  });

  test("another account's, a deleted and an unknown document: 404 document_not_found, no credit", async () => {
    const other = await t.newAccount();
    const theirs = await store(other.key, { secret: true });
    const { key } = await t.newAccount();
    const mine = await store(key, {});
    await t.json("DELETE", `/api/v1/documents/${mine.id}`, { key });
    for (const id of [theirs.id, mine.id, "doc_00000000-0000-0000-0000-000000000000"]) {
      const res = await run("schema.clean-json", { inputs: { primaryDocumentId: id } }, key);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("document_not_found");
      expect((await run("merge.deep-merge", { inputs: { primary: {}, secondaryDocumentId: id } }, key)).status).toBe(404);
    }
    expect(await creditsUsed(key)).toBe(0);
  });

  test("a key without the documents permission: 403 for stored inputs and saved outputs", async () => {
    const { key } = await t.newAccount({ permissions: ["utilities"] });
    const doc = await store((await t.newAccount()).key, {});
    for (const body of [{ inputs: { primaryDocumentId: doc.id } }, { inputs: { primary: {} }, output: { saveAs: { name: "x" } } }]) {
      const res = await run("schema.clean-json", body, key);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("forbidden");
    }
    expect((await run("schema.clean-json", { inputs: { primary: {} }, output: { return: false } }, key)).status).toBe(200);
  });
});

describe("saved outputs", () => {
  test("saveAs creates a document holding the output; return: false leaves it out", async () => {
    const { key } = await t.newAccount();
    const res = await run(
      "schema.clean-json",
      {
        // biome-ignore lint/correctness/noPrecisionLoss: a number past 2^53, sent as JSON text on purpose
        inputs: { primary: { a: null, b: 12345678901234567890 } },
        output: { saveAs: { name: "clean.json", folder: "/out/", tags: ["x"], description: "cleaned" }, return: false },
      },
      key,
    );
    expect(res.status).toBe(200);
    expect(res.body.output).toBeUndefined();
    expect(res.body).toMatchObject({
      success: true,
      creditsUsed: 1,
      document: { name: "clean.json", folder: "out", tags: ["x"], description: "cleaned" },
    });
    expect(JSON.parse(await contentOf(key, res.body.document.id))).toEqual({ b: 12345678901234567000 });
    const returned = await run("schema.clean-json", { inputs: { primary: { a: null } }, output: { saveAs: { name: "two.json" } } }, key);
    expect(returned.body).toMatchObject({ output: {}, document: { name: "two.json", fileSize: 2 } });
  });

  test("saveTo replaces the content (as a new content version); ifMatch is honoured", async () => {
    const { key } = await t.newAccount();
    const doc = await store(key, { a: null, b: 1 });
    const etag = (await t.request("GET", `/api/v1/documents/${doc.id}/content`, { key })).headers.get("etag")!;
    const stale = await run(
      "schema.clean-json",
      { inputs: { primaryDocumentId: doc.id }, output: { saveTo: doc.id, ifMatch: '"stale"' } },
      key,
    );
    expect(stale.status).toBe(412);
    const res = await run("schema.clean-json", { inputs: { primaryDocumentId: doc.id }, output: { saveTo: doc.id, ifMatch: etag } }, key);
    expect(res.status).toBe(200);
    expect(res.body.document).toMatchObject({ id: doc.id, fileSize: 7 });
    expect(await contentOf(key, doc.id)).toBe('{"b":1}');
    const theirs = await store((await t.newAccount()).key, {});
    expect((await run("schema.clean-json", { inputs: { primary: {} }, output: { saveTo: theirs.id } }, key)).status).toBe(404);
    expect(await creditsUsed(key)).toBe(1);
  });

  test("concurrent saveTo runs with the same ifMatch: one wins, the others 412 with their credits refunded", async () => {
    const { key } = await t.newAccount();
    const doc = await store(key, { n: 0 });
    const etag = (await t.request("GET", `/api/v1/documents/${doc.id}/content`, { key })).headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        run(
          "structure.find-replace",
          {
            inputs: { primary: { n: `run ${n}` } },
            config: { search: "run", replacement: "won" },
            output: { saveTo: doc.id, ifMatch: etag },
          },
          key,
        ),
      ),
    );
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412]);
    const winner = results.find((res) => res.status === 200)!;
    expect(await contentOf(key, doc.id)).toBe(JSON.stringify(winner.body.output));
    expect(await creditsUsed(key)).toBe(1);
  });

  test("quotas apply to the saved output: 413, the credit refunded, nothing stored", async () => {
    const { key } = await t.newAccount({ maxDocumentBytes: 100 });
    const big = { text: "x".repeat(200) };
    const res = await run("schema.clean-json", { inputs: { primary: big }, output: { saveAs: { name: "big.json" } } }, key);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("document_too_large");
    expect(await creditsUsed(key)).toBe(0);
    expect((await t.json("GET", "/api/v1/documents", { key })).body.documents).toEqual([]);
  });

  test("a large inline body with an output is read by spans: same answer, malformed structure still 400", async () => {
    const { key } = await t.newAccount();
    const primary = Array.from({ length: 3000 }, (_, id) => ({ id, v: id % 3 ? "keep" : "" }));
    const body = { config: { removeEmptyStrings: true }, inputs: { primary }, output: { saveAs: { name: "spans.json" } } };
    const res = await run("schema.clean-json", body, key);
    expect(res.status).toBe(200);
    expect(res.body.output[0]).toEqual({ id: 0 });
    expect(JSON.parse(await contentOf(key, res.body.document.id))).toEqual(res.body.output);
    const text = JSON.stringify(body);
    for (const broken of [text + "x", text.replace('"inputs":', '"inputs"'), text.replace("]", "}"), text.slice(0, -1)]) {
      const bad = await t.json("POST", "/api/v1/utilities/schema.clean-json", { key, rawBody: broken });
      expect(bad.status).toBe(400);
    }
    expect(await creditsUsed(key)).toBe(1);
  });
});

test("a large body whose member names are escaped (\\u) is read the same way", async () => {
  const { key } = await t.newAccount();
  const primary = Array.from({ length: 3000 }, (_, id) => ({ id, v: null }));
  const text = JSON.stringify({ inputs: { primary }, output: { saveAs: { name: "escaped.json" }, return: false } }).replace(
    '"output"',
    '"outp\\u0075t"',
  );
  const res = await t.json("POST", "/api/v1/utilities/schema.clean-json", { key, rawBody: text });
  expect(res.status).toBe(200);
  expect(res.body.document.name).toBe("escaped.json");
  expect(JSON.parse(await contentOf(key, res.body.document.id))[2]).toEqual({ id: 2 });
});

describe("the payload limit counts stored inputs", () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({ UTILITY_MAX_PAYLOAD_BYTES: "4096" });
  });
  afterAll(async () => {
    await small.close();
  });

  test("a stored document larger than the limit: 413 before it is read, no credit", async () => {
    const { key } = await small.newAccount();
    const doc = (await small.json("POST", "/api/v1/documents", { key, body: { name: "big", content: "x".repeat(5000) } })).body.document;
    const res = await small.json("POST", "/api/v1/utilities/schema.clean-json", { key, body: { inputs: { primaryDocumentId: doc.id } } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("payload_too_large");
    expect((await small.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(0);
  });
});
