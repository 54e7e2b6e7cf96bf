/**
 * convert.csv-to-json, convert.json-to-csv, convert.add-localization and schema.normalize through the
 * engine: POST /api/v1/utilities/<id> on the real app (payloads over UTILITY_INLINE_MAX_BYTES run in a worker).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const post = (utilityId: string, body: unknown) => t.json("POST", `/api/v1/utilities/${utilityId}`, { body });

test("convert.csv-to-json: inline and in a worker; a non-string primary is 400 utility_failed", async () => {
  const small = await post("convert.csv-to-json", { inputs: { primary: "name,age\nAlice,30" } });
  expect(small.status).toBe(200);
  expect(small.body).toEqual({ success: true, output: [{ name: "Alice", age: 30 }], durationMs: expect.any(Number), creditsUsed: 1 });

  const rows = Array.from({ length: 500 }, (_, index) => `${index};"row ${index}; ""q"""`);
  const large = await post("convert.csv-to-json", { inputs: { primary: `id;label\r\n${rows.join("\r\n")}` }, config: { emptyAs: "null" } });
  expect(large.status).toBe(200);
  expect(large.body.output).toHaveLength(500);
  expect(large.body.output[499]).toEqual({ id: 499, label: 'row 499; "q"' });

  const wrong = await post("convert.csv-to-json", { inputs: { primary: 42 } });
  expect(wrong.status).toBe(400);
  expect(wrong.headers.get("content-type")).toBe("application/problem+json");
  expect(wrong.body.code).toBe("utility_failed");
  expect(wrong.body.detail).toContain("must be a string");
});

test("convert.json-to-csv: CSV text as output; an unknown config field is 400 naming it", async () => {
  const res = await post("convert.json-to-csv", {
    inputs: { primary: [{ name: "Ada", address: { city: "London" } }, { name: "=cmd" }] },
    config: { lineEnding: "\r\n" },
  });
  expect(res.status).toBe(200);
  expect(res.body.output).toBe("name,address.city\r\nAda,London\r\n'=cmd,");

  const bad = await post("convert.json-to-csv", { inputs: { primary: [] }, config: { separator: ";" } });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe("validation_failed");
  expect(bad.body.errors.map((error: { path: string }) => error.path)).toEqual(["/config/separator"]);
});

test("convert.add-localization: wraps texts; an invalid locale is 400 naming the field", async () => {
  const res = await post("convert.add-localization", { inputs: { primary: [{ title: "Save" }] }, config: { locales: ["en", "fr-ca"] } });
  expect(res.status).toBe(200);
  expect(res.body.output).toEqual([{ title: { en: "Save", "fr-CA": "" } }]);

  const bad = await post("convert.add-localization", { inputs: { primary: { title: "Save" } }, config: { locales: ["en", "f"] } });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe("validation_failed");
  expect(bad.body.errors.map((error: { path: string }) => error.path)).toEqual(["/config/locales/1"]);
});

test("schema.normalize: camelCase keys and filled shapes; a string primary is 400 utility_failed", async () => {
  const res = await post("schema.normalize", {
    inputs: { primary: [{ "First Name": "Ada" }, { first_name: "Bo", "Last Name": "Li" }] },
    config: { keyCase: "camel" },
  });
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body.output)).toBe('[{"firstName":"Ada","lastName":null},{"firstName":"Bo","lastName":"Li"}]');

  const wrong = await post("schema.normalize", { inputs: { primary: "text" } });
  expect(wrong.status).toBe(400);
  expect(wrong.body.code).toBe("utility_failed");
});
