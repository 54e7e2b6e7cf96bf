/**
 * The public JSON Patch conformance suite (npm json-patch-test-suite: tests.json and spec_tests.json),
 * every case, run through PATCH /api/v1/documents/{id}/content, and the examples of RFC 7396 Appendix A
 * for JSON Merge Patch. Each case's document and patch are sent as the very bytes the suite files hold,
 * so the cases marked "disabled" there (two of which need a duplicated "op" member, which a JSON parser
 * would fold into one) run too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ArrayNode, expand, keyOf, type ObjectNode, readText, writeNode } from "../../../src/core/json/tree";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await t.newAccount({ permissions: ["documents"] }));
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const decoder = new TextDecoder();

interface SuiteCase {
  comment?: string;
  doc: unknown;
  patch: unknown[];
  expected?: unknown;
  error?: string;
  disabled?: boolean;
  docText: string;
  patchText: string;
}

/** The cases of one suite file, each with its doc and patch as the exact text of the file. */
function suite(file: string): SuiteCase[] {
  const bytes = readFileSync(join(import.meta.dir, "../../../node_modules/json-patch-test-suite", file));
  const parsed = JSON.parse(decoder.decode(bytes)) as Omit<SuiteCase, "docText" | "patchText">[];
  const records = (expand(readText(bytes).root) as ArrayNode).elements;
  return parsed.map((record, index) => {
    const members = (expand(records[index].value) as ObjectNode).members;
    const text = (name: string) => decoder.decode(writeNode(members.find((member) => keyOf(member) === name)!.value));
    return { ...record, docText: text("doc"), patchText: text("patch") };
  });
}

async function createWith(contentText: string): Promise<string> {
  const res = await t.json("POST", DOCS, { key, body: { name: "case", contentText } });
  expect(res.status).toBe(201);
  return res.body.document.id;
}

const patch = (id: string, body: string, contentType: string) =>
  t.json("PATCH", `${DOCS}/${id}/content`, { key, rawBody: body, headers: { "content-type": contentType } });

async function content(id: string): Promise<string> {
  return (await t.request("GET", `${DOCS}/${id}/content`, { key })).text();
}

for (const file of ["tests.json", "spec_tests.json"]) {
  const cases = suite(file);
  describe(`json-patch-test-suite ${file} (${cases.length} cases, ${cases.filter((c) => c.disabled).length} marked disabled, run too)`, () => {
    cases.forEach((testCase, index) => {
      const name = `#${index} ${testCase.comment ?? testCase.patchText.slice(0, 80)}${testCase.disabled ? " [disabled upstream]" : ""}`;
      test(name, async () => {
        const id = await createWith(testCase.docText);
        const res = await patch(id, testCase.patchText, "application/json-patch+json");
        if (testCase.error !== undefined) {
          const failing = res.body.errors?.[0]?.path;
          const failingOp =
            failing === undefined ? undefined : (testCase.patch[Number(failing.slice(1))] as { op?: string } | undefined)?.op;
          // a failing test is 409, any other error 400 naming the operation
          if (res.status === 409) expect([res.body.code, failingOp]).toEqual(["patch_test_failed", "test"]);
          else expect([res.status, res.body.code]).toEqual([400, "patch_invalid"]);
          expect(failing).toMatch(/^\/\d+$/);
          // atomic: nothing of the patch is stored, and no version is made
          expect(await content(id)).toBe(testCase.docText);
          expect((await t.json("GET", `${DOCS}/${id}`, { key })).body.document.version).toBe(1);
          return;
        }
        expect([res.status, res.body.code]).toEqual([200, undefined]);
        expect(res.body.document.version).toBe(2);
        const stored = await content(id);
        expect(res.headers.get("etag")).toBe(`"${new Bun.CryptoHasher("sha256").update(stored).digest("hex")}"`);
        expect(JSON.parse(stored)).toEqual("expected" in testCase ? testCase.expected : testCase.doc);
      });
    });
  });
}

describe("RFC 7396 Appendix A: every example through the HTTP endpoint", () => {
  const examples: [string, string, unknown][] = [
    ['{"a":"b"}', '{"a":"c"}', { a: "c" }],
    ['{"a":"b"}', '{"b":"c"}', { a: "b", b: "c" }],
    ['{"a":"b"}', '{"a":null}', {}],
    ['{"a":"b","b":"c"}', '{"a":null}', { b: "c" }],
    ['{"a":["b"]}', '{"a":"c"}', { a: "c" }],
    ['{"a":"c"}', '{"a":["b"]}', { a: ["b"] }],
    ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', { a: { b: "d" } }],
    ['{"a":[{"b":"c"}]}', '{"a":[1]}', { a: [1] }],
    ['["a","b"]', '["c","d"]', ["c", "d"]],
    ['{"a":"b"}', '["c"]', ["c"]],
    ['{"a":"foo"}', "null", null],
    ['{"a":"foo"}', '"bar"', "bar"],
    ['{"e":null}', '{"a":1}', { e: null, a: 1 }],
    ["[1,2]", '{"a":"b","c":null}', { a: "b" }],
    ["{}", '{"a":{"bb":{"ccc":null}}}', { a: { bb: {} } }],
  ];
  examples.forEach(([original, mergePatch, result], index) => {
    test(`A.${index + 1}: ${original} + ${mergePatch}`, async () => {
      const id = await createWith(original);
      const res = await patch(id, mergePatch, "application/merge-patch+json");
      expect(res.status).toBe(200);
      expect(JSON.parse(await content(id))).toEqual(result);
    });
  });

  test("RFC 7396 §3: the example document and patch", async () => {
    const id = await createWith(
      '{"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},"tags":["example","sample"],"content":"This will be unchanged"}',
    );
    const res = await patch(
      id,
      '{"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},"tags":["example"]}',
      "application/merge-patch+json",
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(await content(id))).toEqual({
      title: "Hello!",
      author: { givenName: "John" },
      tags: ["example"],
      content: "This will be unchanged",
      phoneNumber: "+01-123-456-7890",
    });
  });
});
