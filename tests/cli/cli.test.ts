/**
 * The `kiln` CLI as a user runs it: a subprocess against the real server, checking stdout, stderr and
 * exit codes. (Progress bars on a terminal: progress.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
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

describe("kiln docs: every document operation", () => {
  const ids = (text: string) => json(text).map((entry: { id: string }) => entry.id);
  const push = async (target: Target, name: string, content: string, ...options: string[]) => {
    const pushed = await kiln(["--json", "docs", "push", "--name", name, ...options, "-"], target, { stdin: content });
    expect(pushed.code).toBe(0);
    return json(pushed.stdout) as { id: string; version: number };
  };

  test("restore brings back what rm deleted; purge removes a deleted document and refuses an active one", async () => {
    const { id } = await push(user, "back.json", "{}");
    expect((await kiln(["docs", "rm", id], user)).code).toBe(0);
    const restored = await kiln(["docs", "restore", id], user);
    expect([restored.code, restored.stdout]).toEqual([0, `restored ${id}  back.json\n`]);
    expect((await kiln(["docs", "get", id], user)).code).toBe(0);

    const active = await kiln(["docs", "purge", id], user);
    expect(active.code).toBe(1);
    expect(active.stderr).toContain("(document_not_deleted)");
    expect((await kiln(["docs", "rm", id], user)).code).toBe(0);
    const purged = await kiln(["--json", "docs", "purge", id], user);
    expect(json(purged.stdout)).toEqual({ success: true, deleted: true, permanent: true });
    expect((await kiln(["docs", "restore", id], user)).stderr).toContain("(document_not_found)");
  });

  test("edit changes only the metadata it is given; tags are replaced, or removed with --no-tags", async () => {
    const { id } = await push(user, "meta.json", "1", "--folder", "drafts", "--tag", "a", "--description", "first");
    const renamed = await kiln(["docs", "edit", id, "--name", "final.json", "--tag", "x", "--tag", "y"], user);
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toContain("name        final.json");
    expect(renamed.stdout).toContain("tags        x, y");
    expect(renamed.stdout).toContain("folder      drafts");
    expect(renamed.stdout).toContain("description first");
    const cleared = await kiln(["--json", "docs", "edit", id, "--no-tags", "--folder", "", "--description", ""], user);
    expect(json(cleared.stdout)).toMatchObject({ name: "final.json", tags: [], folder: null });
    expect(json(cleared.stdout).description).toBeUndefined();
    expect((await kiln(["--json", "docs", "edit", id, "--folder", "done/2026"], user)).stdout).toContain('"folder": "done/2026"');

    const nothing = await kiln(["docs", "edit", id], user);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("give at least one of");
    expect((await kiln(["docs", "edit", id, "--tag", "x", "--no-tags"], user)).code).toBe(2);
    const bad = await kiln(["docs", "edit", id, "--folder", "a/../b"], user);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("(validation_failed)");
  });

  test("patch (JSON Patch, or --merge), versions, pull ID VERSION and restore-version", async () => {
    const original = '{"n": 12345678901234567890, "a": 1}';
    const { id } = await push(user, "patched.json", original);

    const patched = await kiln(["docs", "patch", id, "-"], user, { stdin: '[{"op":"add","path":"/b","value":1.50}]' });
    expect([patched.code, patched.stdout]).toEqual([0, `patched ${id}: version 2 (46 B)\n`]);
    expect((await kiln(["docs", "pull", id], user)).stdout).toBe('{"n": 12345678901234567890, "a": 1, "b": 1.50}');
    writeFileSync(join(work, "merge.json"), '{"a": null}');
    expect((await kiln(["docs", "patch", id, join(work, "merge.json"), "--merge"], user)).code).toBe(0);
    const merged = (await kiln(["docs", "pull", id], user)).stdout;
    expect(merged).toContain('"n": 12345678901234567890');
    expect(Object.keys(json(merged))).toEqual(["n", "b"]);
    const failed = await kiln(["docs", "patch", id, "-"], user, { stdin: '[{"op":"test","path":"/b","value":2}]' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("(patch_test_failed)");
    const malformed = await kiln(["docs", "patch", id, "-"], user, { stdin: "[{" });
    expect(malformed.code).toBe(2);

    const versions = await kiln(["--json", "docs", "versions", id], user);
    expect(json(versions.stdout).map((version: { version: number }) => version.version)).toEqual([3, 2, 1]);
    const table = await kiln(["docs", "versions", id, "--limit", "2"], user);
    expect(table.stdout.split("\n")[0]).toMatch(/^version\s+size\s+created\s+etag$/);
    expect(table.stderr).toContain("more versions follow");
    expect((await kiln(["docs", "pull", id, "1"], user)).stdout).toBe(original);

    const restored = await kiln(["docs", "restore-version", id, "1"], user);
    expect([restored.code, restored.stdout]).toEqual([0, `restored version 1 of ${id} as version 4\n`]);
    expect((await kiln(["docs", "pull", id], user)).stdout).toBe(original);
    expect((await kiln(["docs", "restore-version", id, "first"], user)).code).toBe(2);
    expect((await kiln(["docs", "pull", id, "9"], user)).stderr).toContain("(version_not_found)");
  });

  test("ls --folder takes the folder alone, with --recursive its subfolders too; folders lists them with their counts", async () => {
    const target = { url: user.url, key: await run.newKey(["documents"]) };
    const top = await push(target, "top.json", "1", "--folder", "tree");
    const deep = await push(target, "deep.json", "2", "--folder", "tree/a/b");
    await push(target, "beside.json", "3", "--folder", "tree-old");
    expect(ids((await kiln(["--json", "docs", "ls", "--folder", "tree"], target)).stdout)).toEqual([top.id]);
    expect(ids((await kiln(["--json", "docs", "ls", "--folder", "tree", "--recursive"], target)).stdout)).toEqual([deep.id, top.id]);
    const exported = await kiln(["export", "--folder", "tree", "-r"], target);
    expect(
      exported.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).document.name),
    ).toEqual(["top.json", "deep.json"]);

    const folders = await kiln(["docs", "folders"], target);
    expect(folders.stdout.split("\n")[0]).toMatch(/^path\s+documents\s+created$/);
    const counts = await kiln(["--json", "docs", "folders"], target);
    expect(json(counts.stdout).map((folder: { path: string; documentCount: number }) => [folder.path, folder.documentCount])).toEqual([
      ["tree", 1],
      ["tree-old", 1],
      ["tree/a", 0],
      ["tree/a/b", 1],
    ]);
  });

  test("link prints a URL that downloads the content without a key", async () => {
    const { id } = await push(user, "shared.json", '{"shared": true}');
    const made = await kiln(["docs", "link", id, "--expires-in", "60"], user);
    expect(made.code).toBe(0);
    expect(made.stderr).toStartWith("valid until ");
    const download = await fetch(made.stdout.trim());
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('{"shared": true}');
    expect((await kiln(["docs", "link", id, "--expires-in", "soon"], user)).code).toBe(2);
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
    expect(human.stdout).toMatch(/\nanswers {3}0 B of 16.8 MB kept for Idempotency-Key retries\n$/);
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
