/**
 * A worker's whole request body (executeBytes) run on the primary input's text: for bodies of every
 * shape, the answer or the error is the one that parsing the whole body gives. The usual shape,
 * `{"inputs":{"primary":…},"config":…}`, is read in one pass with the config found from the end, so the
 * bodies put `"config"` where that guess goes wrong: inside the records, inside the config, as a key.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { HttpError } from "../../src/core/errors";
import { validationError } from "../../src/core/errors";
import { executeBytes } from "../../src/engine/execute-request";
import { runSteps } from "../../src/engine/execution";
import { readBody, readUtilityRun } from "../../src/engine/run-plan";
import type { RunResult } from "../../src/engine/run-result";
import { registry } from "../../src/utilities/registry";

const pickFields = registry.find("structure.pick-fields")!;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAX_OUTPUT = 1 << 20;

const SPACE = fc.constantFrom("", "", " ", "\n", "\t ");
const WORDS = ["config", "id", "name", "primary", "inputs", '"config"', "}", ",", "\\"];
const scalar = fc.oneof(
  fc.constantFrom(...WORDS).map((word) => JSON.stringify(word)),
  fc.constantFrom("1", "-0", "1E2", "true", "null"),
);
const recordText = fc
  .uniqueArray(fc.tuple(fc.constantFrom("id", "name", "config", "x"), SPACE, scalar), { selector: ([key]) => key, maxLength: 4 })
  .map((members) => `{${members.map(([key, space, value]) => `${space}"${key}"${space}:${value}`).join(",")}}`);
const primaryText = fc.oneof(
  { weight: 6, arbitrary: fc.array(recordText, { maxLength: 4 }).map((records) => `[${records.join(", ")}]`) },
  { weight: 1, arbitrary: recordText },
  { weight: 1, arbitrary: scalar },
);
const configText = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(fc.constantFrom("id", "name", "config", "x.y"), { minLength: 1, maxLength: 3 })
      .map((paths) => JSON.stringify({ paths })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"paths":[]}',
      '{"paths":"id"}',
      '{"paths":["id"],"other":1}',
      '{"paths":["id"]',
      "[]",
      '{"paths":["a"],"config":1}',
    ),
  },
);
const inputsKey = fc.constantFrom('"inputs"', '"inputs"', '"inputs"', '"\\u0069nputs"');
const primaryKey = fc.constantFrom('"primary"', '"primary"', '"primary"', '"\\u0070rimary"');

/** A body: mostly the usual shape, else the members reordered, repeated, joined by others, or broken. */
const body = fc
  .tuple(
    SPACE,
    inputsKey,
    primaryKey,
    primaryText,
    configText,
    SPACE,
    fc.constantFrom("usual", "usual", "usual", "reversed", "repeated", "extra", "broken", "unclosed", "misclosed"),
  )
  .map(([space, inputs, primary, records, config, end, shape]) => {
    const inputsMember = `${space}${inputs}${space}:${space}{${space}${primary}${space}:${space}${records}${space}}`;
    const configMember = `${space}"config"${space}:${space}${config}`;
    if (shape === "reversed") return `{${configMember},${inputsMember}}${end}`;
    if (shape === "repeated") return `{${inputsMember},${configMember},${configMember}}${end}`;
    if (shape === "extra") return `{${inputsMember},"other":1,${configMember}}${end}`;
    if (shape === "broken") return `{${inputsMember},${configMember}${end}`;
    if (shape === "unclosed") return `{${inputsMember.slice(0, -1)},${configMember}}${end}`;
    if (shape === "misclosed") return `{${inputsMember.slice(0, -1)}],${configMember}}${end}`;
    return `{${inputsMember},${configMember}}${end}`;
  });

function outputText(result: RunResult): string {
  return "outputJson" in result ? result.outputJson : decoder.decode(Buffer.concat(result.outputChunks));
}

async function outcome(run: () => Promise<RunResult>): Promise<string> {
  try {
    return outputText(await run());
  } catch (error) {
    const problem = error as HttpError;
    return `${problem.status} ${problem.code} ${problem.message} ${JSON.stringify(problem.extra?.errors ?? null)}`;
  }
}

/** What parsing the whole body gives: executeBytes's own last resort, run on its own. */
async function wholeBody(bytes: Uint8Array): Promise<RunResult> {
  const { value: plan, errors } = readUtilityRun(readBody(bytes, false), pickFields);
  if (errors.length > 0) throw validationError(errors);
  if (!("source" in plan.primary)) throw new Error("unexpected: a stored primary");
  return runSteps([{ utility: pickFields, config: plan.steps[0].config }], plan.primary.source, false, MAX_OUTPUT);
}

describe("executeBytes on the primary input's text", () => {
  test("answers and errors as parsing the whole body does, whatever the body's shape", async () => {
    let onText = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        runs++;
        const bytes = encoder.encode(text);
        let result: RunResult | undefined;
        const answer = await outcome(async () => (result = await executeBytes(pickFields, bytes, MAX_OUTPUT)));
        expect(answer).toBe(await outcome(() => wholeBody(bytes)));
        // the whole-body path answers with text, the paths over the primary's text with its bytes
        if (result && "outputChunks" in result) onText++;
      }),
      { numRuns: 3000 },
    );
    expect(onText).toBeGreaterThan(runs / 5);
  });

  test('the usual shape with "config" inside the records and inside the config is answered from the text', async () => {
    const text =
      '{ "inputs" : { "primary" : [{"id":"config","config":1},{"id":"\\"config\\":"}] } , "config" : {"paths":["id","config"]} }\n';
    const result = await executeBytes(pickFields, encoder.encode(text), MAX_OUTPUT);
    expect("outputChunks" in result).toBe(true);
    expect(outputText(result)).toBe('[{"id":"config","config":1},{"id":"\\"config\\":"}]');
    expect(outputText(result)).toBe(outputText(await wholeBody(encoder.encode(text))));
  });
});
