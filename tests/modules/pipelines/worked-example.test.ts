/** docs/pipelines.md's worked example, run as written: its request bodies are read from the page itself. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";

const page = readFileSync(resolve(import.meta.dir, "../../../docs/pipelines.md"), "utf8");

/** The block after `<!-- worked-example: name -->`: the heredoc body of a sh block, or a json block. */
function exampleBlock(name: string): string {
  const after = page.split(`<!-- worked-example: ${name} -->`)[1];
  if (after === undefined) throw new Error(`docs/pipelines.md has no worked-example: ${name}`);
  const block = after.slice(after.indexOf("```"), after.indexOf("```", after.indexOf("```") + 3));
  const heredoc = block.match(/<<JSON[^\n]*\n([\s\S]*?)\nJSON/);
  return heredoc ? heredoc[1] : block.slice(block.indexOf("\n") + 1);
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test("CSV document → csv-to-json → filter → pick-fields → saved as a new document", async () => {
  const { key } = await t.newAccount();
  const created = await t.json("POST", "/api/v1/documents", { key, rawBody: exampleBlock("create") });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const runBody = exampleBlock("run").replace("$ORDERS_ID", created.body.document.id);
  const res = await t.json("POST", "/api/v1/pipelines/run", { key, rawBody: runBody });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    success: true,
    creditsUsed: 3,
    document: { name: "big-orders.json", folder: "reports", tags: ["orders"] },
  });
  expect(res.body.output).toBeUndefined();
  expect(res.body.steps.map((step: { utility: string }) => step.utility)).toEqual([
    "convert.csv-to-json",
    "generate.filter",
    "structure.pick-fields",
  ]);
  const content = await (await t.request("GET", `/api/v1/documents/${res.body.document.id}/content`, { key })).text();
  expect(content).toBe(exampleBlock("output").trim());
  expect(res.body.document.fileSize).toBe(content.length);
});
