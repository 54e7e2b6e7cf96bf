/** `kiln jobs` against the real server (its job runner included), as a user runs it. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
import { kiln, type Target } from "./support";

setDefaultTimeout(60_000);

let run: RunServer;
let user: Target;
const ids: string[] = [];
beforeAll(async () => {
  run = await startRunServer();
  user = { url: run.server.url, key: await run.newKey(["documents", "utilities"]) };
  for (const csv of ["a,b\n1,2", "a,b\n3,4"]) {
    const response = await fetch(`${run.server.url}/api/v1/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "t", folder: "csv", content: csv }),
    });
    ids.push(((await response.json()) as { document: { id: string } }).document.id);
  }
});
afterAll(async () => {
  await run.close();
});

test("run follows a job to its end; ls, show and results read it; cancel of a finished job fails", async () => {
  const ran = await kiln(["jobs", "run", "--folder", "csv", "--utility", "convert.csv-to-json", "--save-as", "json"], user);
  expect(ran.code).toBe(0);
  const [, id] = /^(job_\S+) succeeded: 2\/2 \(2 succeeded, 0 failed, 0 skipped\)$/m.exec(ran.stdout) ?? [];
  expect(id).toBeDefined();

  const listed = await kiln(["jobs", "ls", "--state", "succeeded"], user);
  expect(listed.stdout).toContain(id!);
  const shown = JSON.parse((await kiln(["--json", "jobs", "show", id!], user)).stdout);
  expect(shown).toMatchObject({ id, kind: "utility", state: "succeeded", progress: { total: 2, succeeded: 2 } });

  const results = (await kiln(["jobs", "results", id!], user)).stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(results.map((line) => line.documentId)).toEqual(ids);
  const saved = await fetch(`${run.server.url}/api/v1/documents/${results[1].outputDocumentId}/content`, {
    headers: { authorization: `Bearer ${user.key}` },
  });
  expect(await saved.json()).toEqual([{ a: 3, b: 4 }]);

  const cancelled = await kiln(["jobs", "cancel", id!], user);
  expect(cancelled.code).toBe(1);
  expect(cancelled.stderr).toContain("already finished");
});

test("run exits 1 when the job fails, and 2 on a usage error", async () => {
  const failing = await kiln(["jobs", "run", "--ids", ids.join(","), "--utility", "convert.json-to-csv", "--report", "--stop"], user);
  expect(failing.code).toBe(1);
  expect(failing.stdout).toContain("failed");
  expect((await kiln(["jobs", "run", "--utility", "x", "--report"], user)).code).toBe(2);
  const detached = await kiln(["jobs", "run", "--folder", "csv", "--utility", "convert.csv-to-json", "--report", "--detach"], user);
  expect(detached.stdout.trim()).toMatch(/^job_/);
});

test("run --folder --filter takes the documents a query matches, its numbers as written", async () => {
  const post = (path: string, body: string) =>
    fetch(`${run.server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body,
    });
  for (const n of ["9007199254740993", "9007199254740992"]) {
    expect((await post("/api/v1/documents", `{"name":"n","folder":"numbers","content":{"n":${n}}}`)).status).toBe(201);
  }
  const index = (await (await post("/api/v1/indexes", '{"folder":"numbers","fields":[{"path":"/n"}]}')).json()) as {
    index: { id: string };
  };
  for (let i = 0; i < 100; i++) {
    const state = await fetch(`${run.server.url}/api/v1/indexes/${index.index.id}`, { headers: { authorization: `Bearer ${user.key}` } });
    if (((await state.json()) as { index: { state: string } }).index.state === "ready") break;
    await Bun.sleep(100);
  }
  const ran = await kiln(
    [
      "jobs",
      "run",
      "--folder",
      "numbers",
      "--filter",
      '{"/n":9007199254740993}',
      "--utility",
      "structure.pick-fields",
      "--config",
      '{"fields":["n"]}',
      "--report",
    ],
    user,
  );
  expect(ran.code).toBe(0);
  expect(ran.stdout).toMatch(/succeeded: 1\/1 /);
  expect((await kiln(["jobs", "run", "--filter", "{}", "--utility", "x", "--report"], user)).code).toBe(2);
});
