/**
 * A generated client, as an integrator makes one: the app listens on a loopback port, its live
 * GET /openapi.json goes through openapi-typescript, and tests/client/openapi-fetch/program.ts (with
 * docs/integration.md's NDJSON block beside it, as kiln-ndjson.ts) is type-checked against the result
 * with tsc --strict in a folder outside the repository, then run against the server: every family of
 * operations with openapi-fetch alone, its answers asserted here.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestApp, type TestApp } from "../support/app";
import { docsBlock } from "../support/docs";

setDefaultTimeout(120_000);

const ROOT = resolve(import.meta.dir, "../..");

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let url: string;
let key: string;
let folder: string;

/** Runs a command to its end; its exit code and output. */
async function run(command: string[], cwd: string) {
  const child = Bun.spawn(command, { cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, output: `${stdout}${stderr}` };
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  ({ key } = await t.newAccount({ plan: "pro", permissions: ["documents", "utilities", "webhooks"] }));
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
  url = `http://127.0.0.1:${server.port}`;
  folder = mkdtempSync(join(tmpdir(), "kiln-openapi-fetch-"));
});
afterAll(async () => {
  server?.stop(true);
  await t?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe("openapi-typescript + openapi-fetch over the live document", () => {
  test("the types are generated from GET /openapi.json, and the program and the docs' NDJSON block type-check (strict)", async () => {
    const document = await fetch(`${url}/openapi.json`);
    expect(document.status).toBe(200);
    writeFileSync(join(folder, "openapi.json"), await document.text());
    const generated = await run(
      [process.execPath, join(ROOT, "node_modules/openapi-typescript/bin/cli.js"), "openapi.json", "-o", "kiln-api.ts"],
      folder,
    );
    expect(generated).toMatchObject({ code: 0 });
    // the generated types say what the document says: output.return is optional, the codes are literals
    const types = readFileSync(join(folder, "kiln-api.ts"), "utf8");
    expect(types).toContain("return?: boolean;");
    expect(types).toContain('"range_not_satisfiable"');

    symlinkSync(join(ROOT, "node_modules"), join(folder, "node_modules"));
    copyFileSync(join(import.meta.dir, "openapi-fetch/program.ts"), join(folder, "program.ts"));
    writeFileSync(join(folder, "kiln-ndjson.ts"), docsBlock("integration.md", "tests/client/openapi-fetch.test.ts type-checks this block"));
    writeFileSync(
      join(folder, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "bundler",
          lib: ["ES2022", "DOM", "DOM.Iterable"],
          types: [],
          strict: true,
          noUncheckedIndexedAccess: true,
          noImplicitOverride: true,
          skipLibCheck: true,
          noEmit: true,
        },
        files: ["program.ts"],
      }),
    );
    const checked = await run([process.execPath, join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], folder);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("the program goes through every family of operations with openapi-fetch alone", async () => {
    const { run: program } = await import(join(folder, "program.ts"));
    const result = await program(url, key);
    const id: string = result.id;
    expect(id).toMatch(/^doc_/);
    expect(result.created).toEqual({ name: "orders", folder: "shop", tags: ["q1"] });
    expect(result.fetchedVersion).toBe(1);
    expect(result.updated).toEqual({ description: "first quarter", tags: ["q1", "shop"] });
    expect(result.listed).toEqual([id]);
    expect(result.folders).toContain("shop");
    expect(result.missing).toEqual({ status: 404, code: "document_not_found" });

    expect(result.content).toEqual({ orders: [{ id: 1, total: 10, note: null }] });
    expect(result.slice).toEqual({ status: 206, contentRange: expect.stringMatching(/^bytes 0-9\/\d+$/), text: '{"orders":' });
    expect(result.pastEnd).toEqual({ status: 416, code: "range_not_satisfiable", contentRange: expect.stringMatching(/^bytes \*\/\d+$/) });

    expect([result.patchedVersion, result.mergedVersion]).toEqual([2, 3]);
    expect(result.failedTest).toEqual({ status: 409, code: "patch_test_failed" });
    expect(result.versions).toEqual([3, 2, 1]);
    expect(result.firstVersion).toEqual({ orders: [{ id: 1, total: 10, note: null }] });
    expect(result.revertedVersion).toBe(4);

    expect(result.utilities).toBeGreaterThanOrEqual(20);
    expect(result.picked).toEqual({ id: 1 });
    expect(result.wrongConfig).toEqual({ status: 400, code: "validation_failed" });
    expect(result.cleaned).toEqual({ output: { orders: [{ id: 1, total: 10 }] }, saved: "orders (clean)", folder: "shop", credits: 1 });
    expect(result.ranSaved).toEqual({ output: [{ id: 1 }, { id: 2 }], saved: "ids", credits: 2 });
    expect(result.ranInline).toEqual({ output: [{ id: 1 }, { id: 2 }], steps: ["schema.clean-json", "structure.pick-fields"] });
    expect(result.pipelines).toEqual([result.pipelineId]);
    expect([result.edited, result.removed]).toEqual(["ids only", true]);

    // the export of folder shop (the document and the saved clean copy), imported into another folder
    expect(result.exported).toEqual([
      { name: "orders", content: { orders: [{ id: 1, total: 10, note: null }] }, contentText: undefined },
      { name: "orders (clean)", content: { orders: [{ id: 1, total: 10 }] }, contentText: undefined },
    ]);
    expect(result.imported).toEqual([
      { line: 1, id: expect.stringMatching(/^doc_/) },
      { line: 2, id: expect.stringMatching(/^doc_/) },
    ]);
    const imported = await t.json("GET", "/api/v1/documents?folder=imported", { key });
    expect(imported.body.documents.map((document: { name: string }) => document.name).sort()).toEqual(["orders", "orders (clean)"]);

    expect(result.throughLink).toEqual({ status: 200, text: JSON.stringify({ orders: [{ id: 1, total: 10, note: null }] }) });
    expect([result.deleted, result.trash, result.restored, result.purged]).toEqual([true, [id], id, true]);
    expect(result.gone).toEqual({ status: 404, code: "document_not_found" });
    expect(result.credits).toBe(6); // clean-json and pick-fields 1 each, then two pipeline runs of 2 steps
    expect(result.events.length).toBeGreaterThan(0);
    expect(new Set(result.events)).toEqual(new Set(["document.created"]));
    expect(result.createdNames).toContain("orders");
    expect(result.webhook).toEqual({ secret: true, listed: true });
    expect([result.webhookDeliveries, result.webhookRemoved]).toEqual([0, true]);
  });
});
