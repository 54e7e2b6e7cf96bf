/**
 * docs/utilities.md tells the truth: every example runs through the API and gives exactly the output
 * shown, every utility of the catalogue has a section with an example, and each config table lists
 * every field with the default the utility really uses.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { examplesOf, type UtilitySection, utilitySections } from "../support/docs";

setDefaultTimeout(30_000);

const sections = utilitySections();

/** The config table rows: field → the default cell, parsed (undefined for "none"/"required"). */
function documentedDefaults(section: UtilitySection): Map<string, unknown> {
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
