import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { executeBytes, validateConfig } from "../../../src/modules/utilities/execution";
import { runStreamed, STREAM_MIN_BYTES } from "../../../src/modules/utilities/streaming";
import { registry } from "../../../src/utilities/registry";

setDefaultTimeout(120_000);

let t: TestApp;
beforeAll(async () => { t = await createTestApp(); });
afterAll(async () => { await t.close(); });

const findReplace = registry.find("structure.find-replace")!;
const pickFields = registry.find("structure.pick-fields")!;
const encoder = new TextEncoder();

/** Records with multi-byte text, escapes, nesting and keys that match. */
function records(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    name: `alpha-${i} é 😀 漢字 "quoted" \\ back\nline`,
    alpha: { tags: ["alpha", "beta", `x${i}`], n: i * 1.5, nothing: null, yes: i % 2 === 0 },
    list: [[1, 2], [], {}, "alphalpha"],
  }));
}

/** The output text of the whole-document path: JSON.parse, run, JSON.stringify. */
const wholeOutput = (utility: typeof findReplace, primary: unknown, config: Record<string, unknown>) =>
  JSON.stringify(utility.run({ primary }, validateConfig(utility, config) as never));

const streamedText = (utility: typeof findReplace, body: unknown) => {
  const streamed = runStreamed(utility, encoder.encode(typeof body === "string" ? body : JSON.stringify(body)), 0);
  return streamed && new TextDecoder().decode(Buffer.concat(streamed.chunks));
};

describe("record-wise runs over a large array stream batch by batch", () => {
  const primary = records(3000);

  test("the streamed output is byte for byte the whole-document output: compact or indented, values and keys, empty", () => {
    for (const config of [{ search: "alpha", replacement: "omega" }, { search: "alpha", replacement: "Ω", mode: "both" }, { search: "ALPHA", caseSensitive: false }]) {
      for (const indent of [undefined, 2]) {
        expect(streamedText(findReplace, JSON.stringify({ inputs: { primary }, config }, null, indent))).toBe(wholeOutput(findReplace, primary, config));
      }
    }
    expect(streamedText(findReplace, { inputs: { primary: [] }, config: { search: "a" } })).toBe("[]");
    const pick = { paths: ["id", "alpha.tags", "list"] };
    expect(streamedText(pickFields, { inputs: { primary }, config: pick })).toBe(wholeOutput(pickFields, primary, pick));
  });

  test("what needs the whole input, or fails, is left to the whole-document path", () => {
    expect(streamedText(findReplace, { inputs: { primary }, config: { search: "alpha", replacement: "{{ root.length }}" } })).toBeUndefined();
    expect(streamedText(findReplace, `{"inputs":{"primary":[1],"primary":["alpha"]},"config":{"search":"a"}}`)).toBeUndefined();
    expect(streamedText(pickFields, { inputs: { primary: [...primary.slice(0, 2000), "not a record"] }, config: { paths: ["id"] } })).toBeUndefined();
    expect(streamedText(pickFields, { inputs: { primary }, config: { paths: [] } })).toBeUndefined();
  });

  test("executeBytes gives the whole-document answers and errors when streaming steps aside", async () => {
    const dynamic = { search: "alpha", replacement: "{{ root.length }}" };
    expect(await executeBytes(findReplace, encoder.encode(JSON.stringify({ inputs: { primary }, config: dynamic })))).toMatchObject({ outputJson: wholeOutput(findReplace, primary, dynamic) });
    const withString = encoder.encode(JSON.stringify({ inputs: { primary: [...primary.slice(0, 2000), "not a record"] }, config: { paths: ["id"] } }));
    await expect(executeBytes(pickFields, withString)).rejects.toMatchObject({ status: 400, message: expect.stringContaining("element 2000 of primary is a string") });
  });

  test("over HTTP, past the threshold (worker thread): 200 with the same bytes; malformed deep inside: today's 400", async () => {
    const large = Array.from({ length: Math.ceil((STREAM_MIN_BYTES * 1.05) / JSON.stringify(primary).length) }, () => primary).flat();
    const config = { search: "alpha", replacement: "omega" };
    const text = JSON.stringify({ inputs: { primary: large }, config });
    expect(text.length).toBeGreaterThan(STREAM_MIN_BYTES);
    const response = await t.request("POST", "/api/v1/utilities/structure.find-replace", { rawBody: text });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const answer = await response.text();
    expect(answer).toStartWith(`{"success":true,"output":${wholeOutput(findReplace, large, config)},"durationMs":`);
    expect(JSON.parse(answer)).toMatchObject({ success: true, creditsUsed: 1 });
    const broken = await t.json("POST", "/api/v1/utilities/structure.find-replace", { rawBody: text.replace(`{"id":2500,`, `{"id":2500,,`) });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe("malformed_json");
  });
});
