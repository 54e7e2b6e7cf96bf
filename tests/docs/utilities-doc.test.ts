/**
 * docs/utilities.md tells the truth: every example runs through the API and gives exactly the output
 * shown, every utility of the catalogue has a section with an example, and each config table lists
 * every field with the default the utility really uses.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../support/app";

setDefaultTimeout(30_000);

const markdown = await Bun.file(join(import.meta.dir, "../../docs/utilities.md")).text();

interface Section {
  id: string;
  text: string;
}
const sections: Section[] = markdown
  .split(/^## /m)
  .slice(1)
  .map((chunk) => ({ id: chunk.slice(0, chunk.indexOf("\n")).trim(), text: chunk }));

function examplesOf(section: Section): { request: unknown; output: unknown }[] {
  const blocks = [...section.text.matchAll(/```json (example|output)\n([\s\S]*?)\n```/g)];
  const pairs: { request: unknown; output: unknown }[] = [];
  for (let index = 0; index < blocks.length; index += 2) {
    const [example, output] = [blocks[index], blocks[index + 1]];
    if (example[1] !== "example" || output?.[1] !== "output") throw new Error(`${section.id}: an example must be followed by its output`);
    pairs.push({ request: JSON.parse(example[2]), output: JSON.parse(output[2]) });
  }
  return pairs;
}

/** The config table rows: field → the default cell, parsed (undefined for "none"/"required"). */
function documentedDefaults(section: Section): Map<string, unknown> {
  const rows = new Map<string, unknown>();
  for (const match of section.text.matchAll(/^\| `([^`]+)` \| .*? \| (`(.*?)`|none|required) \| .*\|$/gm)) {
    rows.set(match[1], match[3] === undefined ? undefined : JSON.parse(match[3]));
  }
  return rows;
}

let t: TestApp;
let catalogue: { id: string; configSchema: { properties?: Record<string, { default?: unknown }> } }[];
beforeAll(async () => {
  t = await createTestApp();
  catalogue = (await t.json("GET", "/api/v1/utilities")).body.utilities;
});
afterAll(async () => {
  await t.close();
});

describe("docs/utilities.md", () => {
  test("every utility has a section with at least one example", () => {
    const documented = new Set(sections.filter((section) => examplesOf(section).length > 0).map((section) => section.id));
    expect(catalogue.map((utility) => utility.id).filter((id) => !documented.has(id))).toEqual([]);
  });

  test("each config table lists every field with its real default", () => {
    for (const utility of catalogue) {
      const section = sections.find((candidate) => candidate.id === utility.id)!;
      const documented = documentedDefaults(section);
      const properties = utility.configSchema.properties ?? {};
      expect([...documented.keys()].sort()).toEqual(Object.keys(properties).sort());
      for (const [field, schema] of Object.entries(properties))
        expect([utility.id, field, documented.get(field)]).toEqual([utility.id, field, schema.default]);
    }
  });

  test("every config row says what the field means", () => {
    const unexplained = sections.flatMap((section) =>
      [...section.text.matchAll(/^\| `([^`]+)` \|.*(?<!\\)\|\s*\|$/gm)].map((match) => `${section.id}: ${match[1]}`),
    );
    expect(unexplained).toEqual([]);
  });

  for (const section of sections) {
    test(`${section.id}: every example gives the documented output`, async () => {
      for (const { request, output } of examplesOf(section)) {
        const response = await t.json("POST", `/api/v1/utilities/${section.id}`, { body: request });
        expect(response.status).toBe(200);
        expect(response.body.output).toEqual(output);
      }
    });
  }
});
