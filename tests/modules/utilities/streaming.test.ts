import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { executeBytes } from "../../../src/modules/utilities/execution";
import { STREAM_MIN_BYTES } from "../../../src/modules/utilities/streaming";
import { registry } from "../../../src/utilities/registry";
import { validateConfig } from "../../../src/modules/utilities/execution";

setDefaultTimeout(60_000);

let t: TestApp;
beforeAll(async () => { t = await createTestApp(); });
afterAll(async () => { await t.close(); });

const findReplace = registry.find("structure.find-replace")!;
const encoder = new TextEncoder();

/** Records with multi-byte text, escapes, nesting and keys that match, past the streaming threshold. */
function records(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    name: `alpha-${i} é 😀 漢字 "quoted" \\ back\nline`,
    alpha: { tags: ["alpha", "beta", `x${i}`], n: i * 1.5, nothing: null, yes: i % 2 === 0 },
    list: [[1, 2], [], {}, "alphalpha"],
  }));
}

/** The output text the whole-document path gives: JSON.parse, run, JSON.stringify. */
function expectedOutput(primary: unknown, config: Record<string, unknown>): string {
  return JSON.stringify(findReplace.run({ primary }, validateConfig(findReplace, config) as never));
}

const decodeChunks = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks));

describe("record-wise runs over a large array stream element by element", () => {
  const primary = records(6000);

  test("the streamed output is byte for byte the whole-document output, compact or indented input, values and keys", async () => {
    for (const config of [{ search: "alpha", replacement: "omega" }, { search: "alpha", replacement: "Ω", mode: "both" }, { search: "ALPHA", caseSensitive: false, replacement: "" }]) {
      for (const indent of [undefined, 2]) {
        const bytes = encoder.encode(JSON.stringify({ inputs: { primary }, config }, null, indent));
        expect(bytes.byteLength).toBeGreaterThan(STREAM_MIN_BYTES);
        const result = await executeBytes(findReplace, bytes);
        expect("outputChunks" in result).toBe(true);
        expect(decodeChunks((result as { outputChunks: Uint8Array[] }).outputChunks)).toBe(expectedOutput(primary, config));
      }
    }
  });

  test("pick-fields streams too, with the same bytes; its element errors are today's 400", async () => {
    const pickFields = registry.find("structure.pick-fields")!;
    const config = { paths: ["id", "alpha.tags", "list"] };
    const result = await executeBytes(pickFields, encoder.encode(JSON.stringify({ inputs: { primary }, config })));
    expect(decodeChunks((result as { outputChunks: Uint8Array[] }).outputChunks)).toBe(JSON.stringify(pickFields.run({ primary }, config as never)));
    const withString = [...primary.slice(0, 5000), "not a record", ...primary.slice(5000)];
    const response = await t.json("POST", "/api/v1/utilities/structure.pick-fields", { body: { inputs: { primary: withString }, config } });
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain("element 5000 of primary is a string");
  });

  test("over HTTP (worker thread): 200 with the same bytes, one credit", async () => {
    const config = { search: "alpha", replacement: "omega" };
    const response = await t.request("POST", "/api/v1/utilities/structure.find-replace", { body: { inputs: { primary }, config } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const text = await response.text();
    expect(text).toStartWith(`{"success":true,"output":${expectedOutput(primary, config)},"durationMs":`);
    expect(JSON.parse(text)).toMatchObject({ success: true, creditsUsed: 1 });
  });

  test("a template reading the whole input and duplicate members take the whole-document path, same answers", async () => {
    const dynamic = { search: "alpha", replacement: "{{ root.length }}" };
    const result = await executeBytes(findReplace, encoder.encode(JSON.stringify({ inputs: { primary }, config: dynamic })));
    expect(result).toMatchObject({ outputJson: expectedOutput(primary, dynamic) });
    const duplicated = `{"inputs":{"primary":${JSON.stringify(primary)},"primary":["alpha"]},"config":{"search":"alpha","replacement":"z"}}`;
    expect(await executeBytes(findReplace, encoder.encode(duplicated))).toMatchObject({ outputJson: `["z"]` });
  });

  test("malformed input deep inside the array is the same 400 as before, nothing streamed", async () => {
    const text = JSON.stringify({ inputs: { primary }, config: { search: "alpha" } });
    const broken = text.replace(`{"id":5000,`, `{"id":5000,,`);
    const response = await t.json("POST", "/api/v1/utilities/structure.find-replace", { rawBody: broken });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("malformed_json");
    const badConfig = await t.json("POST", "/api/v1/utilities/structure.find-replace", { rawBody: text.replace(`"search":"alpha"`, `"search":"alpha","nope":1`) });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.errors).toEqual([{ path: "/config/nope", message: "unknown field" }]);
  });
});
