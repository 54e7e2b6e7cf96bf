/**
 * kiln export / kiln import / kiln pipeline run against the real server (GET /api/v1/export,
 * POST /api/v1/import, POST /api/v1/pipelines/run), including their progress on a terminal.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
import { kiln, noTerminal, onTerminal, shell, stopTerminals, type Target } from "./support";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

let run: RunServer;
let work: string;
let source: Target;
beforeAll(async () => {
  run = await startRunServer();
  work = mkdtempSync(join(tmpdir(), "kiln-cli-transfer-"));
  source = { url: run.server.url, key: await run.newKey(["documents", "utilities"]) };
});
afterAll(async () => {
  stopTerminals();
  await run.close();
  rmSync(work, { recursive: true, force: true });
});

if (noTerminal) console.log(`transfer: the terminal tests are skipped: ${noTerminal}`);
const contents = ['{"a":1}', "[1, 2,  3]", '{"nested":{"deep":true},"text":"é"}'];

describe("export and import", () => {
  test("kiln export --folder F > file, then kiln import file on another account recreates the documents byte for byte", async () => {
    for (const [index, content] of contents.entries()) {
      expect(
        (await kiln(["docs", "push", "--name", `e${index}.json`, "--folder", "exp", "--tag", "t", "-"], source, { stdin: content })).code,
      ).toBe(0);
    }
    expect((await kiln(["docs", "push", "--name", "elsewhere.json", "-"], source, { stdin: "{}" })).code).toBe(0);

    const exported = await shell("kiln export --folder exp > dump.ndjson", source, work);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe("");
    const lines = readFileSync(join(work, "dump.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.document.name).sort()).toEqual(["e0.json", "e1.json", "e2.json"]);

    const target = { url: run.server.url, key: await run.newKey(["documents"]) };
    const imported = await kiln(["import", join(work, "dump.ndjson")], target);
    expect(imported.stderr).toBe("imported 3 documents\n");
    expect(imported.code).toBe(0);
    const listed = JSON.parse((await kiln(["--json", "docs", "ls", "--folder", "exp"], target)).stdout) as {
      id: string;
      name: string;
      tags: string[];
    }[];
    expect(listed.map((document) => document.name).sort()).toEqual(["e0.json", "e1.json", "e2.json"]);
    for (const document of listed) {
      expect(document.tags).toEqual(["t"]);
      expect((await kiln(["docs", "pull", document.id], target)).stdout).toBe(contents[Number(document.name[1])]!);
    }
  });

  test("a bad line is reported with its number and does not stop the others; the exit code says something failed", async () => {
    const file = join(work, "mixed.ndjson");
    writeFileSync(file, `${JSON.stringify({ document: { name: "good.json" }, content: { ok: true } })}\n`);
    appendFileSync(file, "{not json\n");
    appendFileSync(file, `${JSON.stringify({ document: { name: "also-good.json" }, content: [1] })}\n`);
    const target = { url: run.server.url, key: await run.newKey(["documents"]) };
    const result = await kiln(["import", file], target);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^line 2: .+ \(\w+\)\nimported 2 documents, 1 lines failed\n$/);
    const json = await kiln(["--json", "import", file], target);
    const results = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results).toHaveLength(3);
    expect(results[1].error.code).toBeString();
  });

  test.skipIf(noTerminal !== undefined)("export -o FILE and import FILE draw their progress on a terminal", async () => {
    const exported = await onTerminal(source, work, "export", "kiln export -o all.ndjson");
    expect(exported).toContain("EXIT=0");
    expect(exported).toMatch(/export 4 documents, [\d.]+ B/);
    expect(exported).toContain("exported 4 documents");
    const target = { url: run.server.url, key: await run.newKey(["documents"]) };
    const imported = await onTerminal(target, work, "import", "kiln import all.ndjson");
    expect(imported).toContain("EXIT=0");
    expect(imported).toMatch(/import all\.ndjson \[█+\] 100%/);
    expect(imported).toContain("imported 4 documents");
  });
});

describe("kiln pipeline run", () => {
  test("runs the steps of FILE on stdin and writes the output, composing like kiln run", async () => {
    writeFileSync(
      join(work, "pipeline.json"),
      JSON.stringify({ steps: [{ utility: "convert.csv-to-json" }, { utility: "structure.pick-fields", config: { fields: ["name"] } }] }),
    );
    writeFileSync(join(work, "people.csv"), "name,age\nAlice,30\nBob,41\n");
    const result = await shell("cat people.csv | kiln pipeline run pipeline.json -", source, work);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([{ name: "Alice" }, { name: "Bob" }]);
    const json = await kiln(["--json", "pipeline", "run", join(work, "pipeline.json"), join(work, "people.csv")], source);
    expect(JSON.parse(json.stdout)).toMatchObject({
      success: true,
      creditsUsed: 2,
      steps: [{ utility: "convert.csv-to-json" }, { utility: "structure.pick-fields" }],
    });
  });

  test("a step that fails: exit 1 with the problem's detail naming the step", async () => {
    writeFileSync(
      join(work, "broken.json"),
      JSON.stringify({
        steps: [{ utility: "convert.csv-to-json" }, { utility: "structure.pick-fields", config: { nope: 1 } }],
        inputs: { primary: "a\n1\n" },
      }),
    );
    const result = await kiln(["pipeline", "run", join(work, "broken.json")], source);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^kiln: 400: .*1.*\(\w+\)\n$/);
  });
});
