/**
 * The `kiln` CLI as a user runs it: a subprocess against the real server, checking stdout, stderr and
 * exit codes. (Progress bars on a terminal: progress.test.ts.)
 */
import { afterAll, beforeAll, setDefaultTimeout, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRunServer, type RunServer } from "../reliability/support/run-server";
import { freePort, removeDataDir, tempDataDir } from "../support/server";
import { CLI, kiln, shell, type Target } from "./support";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

let run: RunServer;
let user: Target;
let admin: Target;
let work: string;

beforeAll(async () => {
  run = await startRunServer();
  user = { url: run.server.url, key: await run.newKey(["documents", "utilities"]) };
  admin = { url: run.server.url, key: run.bootstrapKey };
  work = mkdtempSync(join(tmpdir(), "kiln-cli-"));
});
afterAll(async () => {
  await run.close();
  rmSync(work, { recursive: true, force: true });
});

const json = (text: string) => JSON.parse(text);

describe("shell pipelines", () => {
  test("cat data.csv | kiln run convert.csv-to-json | kiln docs push --name data.json - stores the converted rows", async () => {
    writeFileSync(join(work, "data.csv"), "name,age\nAlice,30\nBob,41\n");
    const pushed = await shell("cat data.csv | kiln run convert.csv-to-json | kiln docs push --name data.json -", user, work);
    expect(pushed.stderr).toBe("");
    expect(pushed.code).toBe(0);
    const [id, name] = pushed.stdout.trim().split(/\s+/);
    expect(name).toBe("data.json");
    const pulled = await kiln(["docs", "pull", id!], user);
    expect(pulled.code).toBe(0);
    expect(json(pulled.stdout)).toEqual([
      { name: "Alice", age: 30 },
      { name: "Bob", age: 41 },
    ]);
  });

  test("a text output (CSV) is written as it is, so it can be redirected to a file", async () => {
    writeFileSync(
      join(work, "rows.json"),
      JSON.stringify([
        { a: 1, b: "x" },
        { a: 2, b: "y,z" },
      ]),
    );
    const result = await shell(
      'kiln run convert.json-to-csv rows.json --config \'{"delimiter":";"}\' > out.csv && cat out.csv',
      user,
      work,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("a;b\n1;x\n2;y,z\n");
  });
});

describe("kiln run", () => {
  test("reads stdin, takes --config as JSON or @file and --secondary, prints the output as JSON", async () => {
    writeFileSync(join(work, "config.json"), JSON.stringify({ arrayStrategy: "concat" }));
    writeFileSync(join(work, "second.json"), JSON.stringify({ list: [3], b: 2 }));
    const merged = await kiln(
      ["run", "merge.deep-merge", "--config", `@${join(work, "config.json")}`, "--secondary", join(work, "second.json"), "-"],
      user,
      { stdin: '{"list":[1,2],"a":1}' },
    );
    expect(merged.stderr).toBe("");
    expect(merged.code).toBe(0);
    expect(json(merged.stdout)).toEqual({ list: [1, 2, 3], a: 1, b: 2 });
  });

  test("--input text sends JSON-looking input as a string; --json prints the whole response", async () => {
    const result = await kiln(["--json", "run", "convert.csv-to-json", "--input", "text", "-"], user, { stdin: "42" });
    expect(result.code).toBe(0);
    const body = json(result.stdout);
    expect(body.success).toBe(true);
    expect(body.creditsUsed).toBe(1);
    expect(body.output).toEqual([]);
    const asCsv = await kiln(["--json", "run", "convert.csv-to-json", "--config", '{"header":false}', "--input", "text", "-"], user, {
      stdin: "42",
    });
    expect(json(asCsv.stdout).output).toEqual([{ col_1: 42 }]);
  });

  test("a config the utility refuses: exit 1 with the problem's detail on stderr and nothing on stdout", async () => {
    const result = await kiln(["run", "convert.csv-to-json", "--config", '{"delimiter":7}', "-"], user, { stdin: "a,b\n1,2\n" });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith("kiln: 400: /config/delimiter");
    expect(result.stderr).toContain("(validation_failed)");
  });

  test("usage errors exit 2 before anything is sent: bad --config JSON, missing file, unknown command", async () => {
    for (const args of [
      ["run", "convert.csv-to-json", "--config", "{nope", "-"],
      ["run", "convert.csv-to-json", join(work, "missing.csv")],
      ["docs", "frobnicate"],
      ["run"],
    ]) {
      const result = await kiln(args, user, { stdin: "a\n1\n" });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr.length).toBeGreaterThan(0);
    }
  });
});

describe("kiln docs", () => {
  test("push with metadata, get, ls, pull byte for byte, replace, rm and purge", async () => {
    const text = '{ "kept":  "exactly",\n  "n": 1.50 }';
    writeFileSync(join(work, "report.json"), text);
    const pushed = await kiln(
      [
        "--json",
        "docs",
        "push",
        join(work, "report.json"),
        "--folder",
        "reports/2026",
        "--tag",
        "q1",
        "--tag",
        "final",
        "--description",
        "first",
      ],
      user,
    );
    expect(pushed.code).toBe(0);
    const document = json(pushed.stdout);
    expect(document).toMatchObject({
      name: "report.json",
      folder: "reports/2026",
      tags: ["q1", "final"],
      description: "first",
      fileSize: text.length,
    });

    const shown = await kiln(["docs", "get", document.id], user);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`id          ${document.id}`);
    expect(shown.stdout).toContain("folder      reports/2026");
    expect(shown.stdout).toContain("tags        q1, final");

    const listed = await kiln(["--json", "docs", "ls", "--folder", "reports/2026"], user);
    expect(json(listed.stdout).map((entry: { id: string }) => entry.id)).toEqual([document.id]);
    const table = await kiln(["docs", "ls", "--folder", "reports/2026"], user);
    expect(table.stdout.split("\n")[0]).toMatch(/^id\s+name\s+folder\s+size\s+updated$/);
    expect(table.stdout).toContain(document.id);

    const file = join(work, "pulled.json");
    expect((await kiln(["docs", "pull", document.id, "-o", file], user)).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(text);

    const replaced = await kiln(["docs", "push", "--replace", document.id, "-"], user, { stdin: "[1,2,3]" });
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toBe(`replaced the content of ${document.id} (7 B)\n`);
    expect((await kiln(["docs", "pull", document.id], user)).stdout).toBe("[1,2,3]");

    const removed = await kiln(["docs", "rm", document.id], user);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toStartWith(`deleted ${document.id} (restorable until `);
    expect((await kiln(["docs", "get", document.id], user)).code).toBe(1);
    const deleted = await kiln(["--json", "docs", "ls", "--deleted"], user);
    expect(json(deleted.stdout).map((entry: { id: string }) => entry.id)).toContain(document.id);
  });

  test("rm --purge removes the document for good", async () => {
    const pushed = await kiln(["--json", "docs", "push", "--name", "gone.json", "-"], user, { stdin: "{}" });
    const id = json(pushed.stdout).id;
    const purged = await kiln(["docs", "rm", "--purge", id], user);
    expect(purged.stdout).toBe(`purged ${id}\n`);
    expect(json((await kiln(["--json", "docs", "ls", "--deleted"], user)).stdout).map((entry: { id: string }) => entry.id)).not.toContain(
      id,
    );
  });

  test("ls follows every page with --all and says when more follow without it", async () => {
    const target = { url: user.url, key: await run.newKey(["documents"]) };
    for (let i = 0; i < 3; i++)
      expect((await kiln(["docs", "push", "--name", `p${i}.json`, "-"], target, { stdin: `[${i}]` })).code).toBe(0);
    const page = await kiln(["--json", "docs", "ls", "--limit", "2"], target);
    expect(json(page.stdout)).toHaveLength(2);
    expect(page.stderr).toContain("more documents follow");
    const all = await kiln(["--json", "docs", "ls", "--limit", "2", "--all"], target);
    expect(json(all.stdout).map((entry: { name: string }) => entry.name)).toEqual(["p2.json", "p1.json", "p0.json"]);
    expect(all.stderr).toBe("");
  });

  test("a document that does not exist: exit 1, the problem's detail and code on stderr", async () => {
    const result = await kiln(["docs", "pull", "doc_missing"], user);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("kiln: 404: No document with id 'doc_missing' (document_not_found)\n");
  });

  test("push from stdin needs --name; malformed JSON is refused before anything is sent", async () => {
    const nameless = await kiln(["docs", "push", "-"], user, { stdin: "{}" });
    expect(nameless.code).toBe(2);
    expect(nameless.stderr).toContain("--name is required");
    const malformed = await kiln(["docs", "push", "--name", "bad.json", "-"], user, { stdin: "{oops" });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toStartWith("kiln: docs push: stdin is not valid JSON: ");
  });
});

describe("keys and usage", () => {
  test("keys create prints a secret that works; ls lists it; revoke makes it answer 401", async () => {
    const account = (await (
      await fetch(`${admin.url}/api/v1/admin/accounts`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin.key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "cli-keys" }),
      })
    ).json()) as { account: { id: string } };
    const created = await kiln(
      ["keys", "create", "--account", account.account.id, "--permissions", "documents,utilities", "--name", "laptop"],
      admin,
    );
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toStartWith("kiln_");
    expect(created.stderr).toContain("shown only now");

    const usage = await kiln(["--json", "usage"], { url: admin.url, key: secret });
    expect(usage.code).toBe(0);
    expect(json(usage.stdout)).toMatchObject({ success: true, storage: { usedBytes: 0 }, credits: { used: 0 } });
    const human = await kiln(["usage"], { url: admin.url, key: secret });
    expect(human.stdout).toMatch(/^plan {6}\w+\nstorage {3}0 B of /);
    // in decimal units, as plans set their limits: 50 MB shows as 50 MB (not 47.7 MiB)
    const [, shown, unit] = /largest document: ([\d.]+) (kB|MB|GB|TB)\)/.exec(human.stdout) ?? [];
    const factor = { kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[unit as "kB"];
    expect(Number(shown) * factor).toBe(json(usage.stdout).storage.maxDocumentBytes);

    const listed = await kiln(["--json", "keys", "ls", "--account", account.account.id], admin);
    const keys = json(listed.stdout);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ name: "laptop", permissions: ["documents", "utilities"], revokedAt: null });
    expect(listed.stdout).not.toContain(secret);

    const revoked = await kiln(["keys", "revoke", keys[0].id], admin);
    expect(revoked.stdout).toBe(`revoked ${keys[0].id}\n`);
    const refused = await kiln(["usage"], { url: admin.url, key: secret });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("kiln: 401: The API key has been revoked (unauthorized)\n");
  });

  test("keys need an admin key: 403 with its detail", async () => {
    const result = await kiln(["keys", "ls"], user);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^kiln: 403: .+\(forbidden\)\n$/);
  });

  test("without KILN_KEY: 401 and a hint; with no server at KILN_URL: exit 1 saying it cannot reach it", async () => {
    const keyless = await kiln(["usage"], { url: user.url });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain("set KILN_KEY to an API key");
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const closedPort = listener.port;
    listener.stop(true);
    const unreachable = await kiln(["usage"], { url: `http://127.0.0.1:${closedPort}`, key: user.key });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toStartWith(`kiln: cannot reach http://127.0.0.1:${closedPort}`);
  });
});

test("kiln serve starts the server like bun run start and stops cleanly on SIGTERM", async () => {
  const dataDir = tempDataDir();
  const port = freePort();
  const key = `kiln_ServeTest${Bun.randomUUIDv7().replaceAll("-", "")}`;
  const server = Bun.spawn(["bun", CLI, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key, LOG_LEVEL: "warn" },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const target = { url: `http://127.0.0.1:${port}`, key };
    let ready = false;
    for (let waited = 0; waited < 50_000 && !ready && server.exitCode === null; waited += 100) {
      ready = await fetch(`${target.url}/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (!ready) await Bun.sleep(100);
    }
    expect(ready).toBe(true);
    const usage = await kiln(["--json", "usage"], target);
    expect(JSON.parse(usage.stdout)).toMatchObject({ success: true, plan: "unlimited" });
    server.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  } finally {
    if (server.exitCode === null) server.kill("SIGKILL");
    await removeDataDir(dataDir);
  }
});
