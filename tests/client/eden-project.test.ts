/**
 * docs/integration.md's Eden Treaty set-up, exactly as written, from a project of its own: a folder
 * outside the repository holds a link named kiln to this checkout and a new project beside it; Kiln's
 * block runs in the checkout (bun run build:types), the project's block installs its packages, the
 * documented tsconfig.json and client.ts are written as they are, tsc (strict) must pass, and the
 * client runs against a real server on a loopback port.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestApp, type TestApp } from "../support/app";
import { docsBlock } from "../support/docs";

setDefaultTimeout(150_000);

const ROOT = resolve(import.meta.dir, "../..");
const block = (marker: string) => docsBlock("integration.md", `tests/client/eden-project.test.ts ${marker}`);

let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let url: string;
let key: string;
let workspace: string;
let project: string;

/** Runs a command to its end (the server answers meanwhile: this process is not blocked); its exit code and output. */
async function run(command: string[], cwd: string, env: Record<string, string> = {}) {
  const child = Bun.spawn(command, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, output: `${stdout}${stderr}` };
}

beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await t.newAccount({ permissions: ["documents", "utilities"] }));
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
  url = `http://127.0.0.1:${server.port}`;
  workspace = mkdtempSync(join(tmpdir(), "kiln-eden-"));
  symlinkSync(ROOT, join(workspace, "kiln"));
  project = join(workspace, "my-app");
  mkdirSync(project);
});
afterAll(async () => {
  server?.stop(true);
  await t?.close();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe("Eden Treaty from a new project, as docs/integration.md says", () => {
  test("Kiln's declarations are built and the project installs its packages", async () => {
    const kilnSide = await run(["bash", "-euo", "pipefail", "-c", block("runs this block in Kiln's checkout")], join(workspace, "kiln"));
    expect(kilnSide.output).not.toContain("error");
    expect(kilnSide.code).toBe(0);
    expect(await Bun.file(join(ROOT, "dist/types/app.d.ts")).exists()).toBe(true);
    const installed = await run(["bash", "-euo", "pipefail", "-c", block("runs this block in a new folder")], project);
    expect([installed.code, installed.output]).toEqual([0, expect.any(String)]);
    for (const name of ["@elysiajs/eden", "elysia", "typescript", "@types/bun"])
      expect(await Bun.file(join(project, "node_modules", name, "package.json")).exists()).toBe(true);
  });

  test("the documented client.ts type-checks (strict) with the documented tsconfig.json", async () => {
    writeFileSync(join(project, "tsconfig.json"), block("writes this block as tsconfig.json"));
    writeFileSync(join(project, "client.ts"), block("writes this block as client.ts"));
    const tsc = join(project, "node_modules/typescript/bin/tsc");
    // beside it, mistakes the types must catch (an unused @ts-expect-error fails): App is Kiln's real type
    writeFileSync(
      join(project, "mistakes.ts"),
      `import { treaty } from "@elysiajs/eden";
import type { App, UtilityConfig, UtilityRunBody } from "kiln";

const kiln = treaty<App>("http://127.0.0.1:1");
// @ts-expect-error removeNulls is a boolean
export const wrongType: UtilityConfig<"schema.clean-json"> = { removeNulls: "yes" };
// @ts-expect-error clean-json has no paths
export const wrongField: UtilityRunBody<"schema.clean-json"> = { inputs: { primary: 1 }, config: { paths: ["id"] } };
export async function mistakes() {
  // @ts-expect-error limit is a number
  await kiln.api.v1.documents.get({ query: { limit: "10" } });
  // @ts-expect-error a document needs a name
  await kiln.api.v1.documents.post({ content: 1 });
  const created = await kiln.api.v1.documents.post({ name: "x", content: 1 });
  // @ts-expect-error the id is a string
  const id: number | undefined = created.data?.document.id;
  return id;
}
`,
    );
    const checked = await run([process.execPath, tsc, "-p", "."], project);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("the client runs against a real server", async () => {
    const ran = await run([process.execPath, "client.ts"], project, { KILN_URL: url, KILN_KEY: key });
    expect([ran.code, ran.output]).toEqual([0, expect.any(String)]);
    const result = JSON.parse(ran.stdout.trim().split("\n").pop() ?? "");
    expect(result.id).toMatch(/^doc_/);
    expect(result).toEqual({
      id: result.id,
      cleaned: [{ id: 1, total: 10 }],
      tags: ["clean"],
      listed: [result.id],
      content: [{ id: 1, total: 10, note: null }],
      exact: '{"id": 12345678901234567890, "price": 1.0}',
    });
  });
});
