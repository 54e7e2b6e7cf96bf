import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { executeBytes } from "../../src/engine/execute-request";
import { runSteps, validateConfig } from "../../src/engine/execution";
import type { RunResult } from "../../src/engine/run-result";
import { runStreamed, STREAM_MIN_BYTES } from "../../src/engine/streaming";
import { unlimitedBudget } from "../../src/utilities/budget";
import { registry } from "../../src/utilities/registry";
import { createTestApp, type TestApp } from "../support/app";

setDefaultTimeout(180_000);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const findReplace = registry.find("structure.find-replace")!;
const pickFields = registry.find("structure.pick-fields")!;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

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

const outputText = (result: RunResult) => ("outputJson" in result ? result.outputJson : decoder.decode(Buffer.concat(result.outputChunks)));

/** runStreamed over the array text, whatever its size; undefined when it steps aside. */
const streamedText = (utility: typeof findReplace, array: unknown, config: Record<string, unknown>) => {
  const streamed = runStreamed(
    utility,
    validateConfig(utility, config),
    encoder.encode(typeof array === "string" ? array : JSON.stringify(array)),
    unlimitedBudget(),
    0,
  );
  return streamed && outputText(streamed);
};

describe("record-wise runs over a large array stream batch by batch", () => {
  const primary = records(3000);

  test("the streamed output is byte for byte the whole-document output: compact or indented, values and keys, empty", () => {
    for (const config of [
      { search: "alpha", replacement: "omega" },
      { search: "alpha", replacement: "Ω", mode: "both" },
      { search: "ALPHA", caseSensitive: false },
    ]) {
      for (const indent of [undefined, 2]) {
        expect(streamedText(findReplace, JSON.stringify(primary, null, indent), config)).toBe(wholeOutput(findReplace, primary, config));
      }
    }
    expect(streamedText(findReplace, " [ ] ", { search: "a" })).toBe("[]");
    const pick = { paths: ["id", "alpha.tags", "list"] };
    expect(streamedText(pickFields, primary, pick)).toBe(wholeOutput(pickFields, primary, pick));
  });

  test("what needs the whole input, is not an array, is small or fails is left to the whole-document path", () => {
    expect(streamedText(findReplace, primary, { search: "alpha", replacement: "{{ root.length }}" })).toBeUndefined();
    expect(streamedText(findReplace, { rows: primary }, { search: "alpha" })).toBeUndefined();
    expect(streamedText(pickFields, [...primary.slice(0, 2000), "not a record"], { paths: ["id"] })).toBeUndefined();
    expect(streamedText(findReplace, `[{"a":1},{"a":tru}]`, { search: "a" })).toBeUndefined();
    expect(
      runStreamed(findReplace, validateConfig(findReplace, { search: "a" }), encoder.encode(JSON.stringify(primary)), unlimitedBudget()),
    ).toBeUndefined();
  });

  test("runSteps streams one step over JSON text only; a pipeline of two steps gives the same bytes unstreamed", async () => {
    const config = validateConfig(findReplace, { search: "alpha", replacement: "omega" });
    const bytes = encoder.encode(JSON.stringify(records(95_000)));
    expect(bytes.byteLength).toBeGreaterThan(STREAM_MIN_BYTES);
    const streamed = await runSteps([{ utility: findReplace, config }], { json: bytes }, false, Infinity);
    expect("outputChunks" in streamed).toBe(true);
    const identity = validateConfig(findReplace, { search: "no such text" });
    const whole = await runSteps(
      [
        { utility: findReplace, config },
        { utility: findReplace, config: identity },
      ],
      { json: bytes },
      true,
      Infinity,
    );
    expect("outputJson" in whole).toBe(true);
    expect(outputText(streamed)).toBe(outputText(whole));
    expect(streamed.stepDurationsMs).toHaveLength(1);
  });

  test("executeBytes gives the whole-document answers and errors when streaming steps aside", async () => {
    const large = records(95_000);
    const dynamic = { search: "alpha", replacement: "{{ root.length }}" };
    const dynamicRun = await executeBytes(
      findReplace,
      encoder.encode(JSON.stringify({ inputs: { primary: large }, config: dynamic })),
      Infinity,
    );
    expect(dynamicRun).toMatchObject({ outputJson: wholeOutput(findReplace, large, dynamic) });
    const withString = encoder.encode(JSON.stringify({ inputs: { primary: [...large, "not a record"] }, config: { paths: ["id"] } }));
    expect(withString.byteLength).toBeGreaterThan(STREAM_MIN_BYTES);
    await expect(executeBytes(pickFields, withString, Infinity)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("element 95000 of primary is a string"),
    });
    // a repeated member: the last one counts, streamed or not
    const repeated = `{"inputs":{"primary":[1],"primary":${JSON.stringify(large)}},"config":{"search":"alpha"}}`;
    const repeatedRun = await executeBytes(findReplace, encoder.encode(repeated), Infinity);
    expect("outputChunks" in repeatedRun).toBe(true);
    expect(outputText(repeatedRun)).toBe(wholeOutput(findReplace, large, { search: "alpha" }));
  });
});

describe("over HTTP, past the threshold (worker thread)", () => {
  const primary = records(3000);
  const large = Array.from({ length: Math.ceil((STREAM_MIN_BYTES * 1.05) / JSON.stringify(primary).length) }, () => primary).flat();
  const config = { search: "alpha", replacement: "omega" };
  const text = JSON.stringify({ inputs: { primary: large }, config });

  test("a utility run: 200 with the same bytes; malformed deep inside: the usual 400", async () => {
    expect(text.length).toBeGreaterThan(STREAM_MIN_BYTES);
    const response = await t.request("POST", "/api/v1/utilities/structure.find-replace", { rawBody: text });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const answer = await response.text();
    expect(answer).toStartWith(`{"success":true,"output":${wholeOutput(findReplace, large, config)},"durationMs":`);
    expect(JSON.parse(answer)).toMatchObject({ success: true, creditsUsed: 1 });
    const broken = await t.json("POST", "/api/v1/utilities/structure.find-replace", {
      rawBody: text.replace(`{"id":2500,`, `{"id":2500,,`),
    });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe("malformed_json");
  });

  test("a pipeline of one step saving its output: the saved document and the answer hold the whole-document bytes", async () => {
    const response = await t.request("POST", "/api/v1/pipelines/run", {
      rawBody: JSON.stringify({
        steps: [{ utility: "structure.find-replace", config }],
        inputs: { primary: large },
        output: { saveAs: { name: "replaced.json" } },
      }),
    });
    expect(response.status).toBe(200);
    const answer = await response.text();
    const expected = wholeOutput(findReplace, large, config);
    expect(answer).toStartWith(`{"success":true,"output":${expected},"steps":[{"utility":"structure.find-replace","durationMs":`);
    const { document } = JSON.parse(answer);
    const saved = await t.request("GET", `/api/v1/documents/${document.id}/content`);
    expect(await saved.text()).toBe(expected);
  });
});
