import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HttpError } from "../../src/core/errors";
import { problemResponse, STATUS_TITLES } from "../../src/http/errors";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const PROBLEM_KEYS = ["success", "error", "code", "type", "title", "status", "detail", "requestId"];

test("problem+json shape", async () => {
  const res = await t.json("GET", "/api/v1/admin/accounts/acc_missing");
  expect(res.status).toBe(404);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  for (const key of PROBLEM_KEYS) expect(res.body).toHaveProperty(key);
  expect(res.body).toMatchObject({ success: false, type: "about:blank", title: "Not Found", status: 404, code: "account_not_found" });
  expect(res.body.error).toBe(res.body.detail);
  expect(res.body.requestId).toBe(res.headers.get("x-request-id")!);
});

test("malformed JSON is 400 malformed_json", async () => {
  for (const rawBody of ["{", '{"name": }', "nul", '"unterminated']) {
    const res = await t.json("POST", "/api/v1/admin/accounts", { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
    expect(res.body.detail).toStartWith("Malformed JSON");
  }
});

test("invalid UTF-8 and over-deep JSON are 400, and the server keeps serving", async () => {
  const bad = await t.json("POST", "/api/v1/admin/accounts", { rawBody: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) });
  expect(bad.status).toBe(400);
  expect(bad.body.detail).toContain("UTF-8");
  const deep = await t.json("POST", "/api/v1/admin/accounts", { rawBody: "[".repeat(100_000) + "]".repeat(100_000) });
  expect(deep.status).toBe(400);
  expect(deep.body.detail).toContain("nested deeper");
  expect((await t.json("GET", "/health", { key: null })).status).toBe(200);
});

test("a missing body is 400 body_required; an empty object names the required fields", async () => {
  const missing = await t.json("POST", "/api/v1/admin/accounts");
  expect(missing.status).toBe(400);
  expect(missing.body.code).toBe("body_required");
  const empty = await t.json("POST", "/api/v1/admin/accounts", { body: {} });
  expect(empty.status).toBe(400);
  expect(empty.body.errors).toEqual([{ path: "/name", message: "required field is missing" }]);
});

test("validation errors are 400 (not 422) with errors[] naming each field, unknown fields included", async () => {
  const res = await t.json("POST", "/api/v1/admin/accounts", { body: { name: 42, isAdmin: true } });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("validation_failed");
  expect(res.body.errors).toEqual(
    expect.arrayContaining([
      { path: "/name", message: expect.any(String) },
      { path: "/isAdmin", message: "unknown field" },
    ]),
  );
  expect(res.body.detail).toContain("/isAdmin");
});

test("a wrong value that cannot be turned into text is still a 400 naming the field", async () => {
  const unprintable = { toString: 1, valueOf: 1 };
  for (const body of [{ name: unprintable }, { name: "a", plan: unprintable }, { name: "a", storageLimitBytes: unprintable }]) {
    const res = await t.json("POST", "/api/v1/admin/accounts", { body });
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(1);
    expect(Object.keys(body)).toContain(res.body.errors[0].path.slice(1));
  }
});

test("members named toString/valueOf that are not functions never turn validation into a 500", async () => {
  const bodies = [
    '{"name":"a","content":1,"description":{"toString":[false,null]}}',
    '{"name":"a","content":1,"description":{"toString":1,"valueOf":1}}',
    '{"name":"a","content":1,"description":{"\\u0074oString":1}}',
  ];
  for (const rawBody of bodies) {
    const res = await t.json("POST", "/api/v1/documents", { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: "/description", message: expect.any(String) }]);
  }
  const stored = await t.json("POST", "/api/v1/documents", { rawBody: '{"name":"a","content":{"toString":1,"valueOf":[2]}}' });
  expect(stored.status).toBe(201);
  // PUT /documents/:id reads its body raw (a 404 comes before the body) and parses it itself
  for (const rawBody of ['{"name":{"toString":1}}', '{"tags":["x",{"toString":1}]}', '{"name":[{"valueOf":1,"toString":1}]}']) {
    const res = await t.json("PUT", `/api/v1/documents/${stored.body.document.id}`, { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: expect.stringMatching(/^\/(name|tags)/), message: expect.any(String) }]);
  }
  const content = await t.request("GET", `/api/v1/documents/${stored.body.document.id}/content`);
  expect(await content.text()).toBe('{"toString":1,"valueOf":[2]}');
});

test("unknown routes are 404 problem+json", async () => {
  const res = await t.json("GET", "/nowhere", { key: null });
  expect(res.status).toBe(404);
  expect(res.body).toMatchObject({ code: "route_not_found", status: 404 });
});

test("X-Request-Id on every response: taken from the request when sane, else generated", async () => {
  const given = await t.request("GET", "/health", { key: null, headers: { "x-request-id": "trace-abc.123" } });
  expect(given.headers.get("x-request-id")).toBe("trace-abc.123");
  const generated = await t.request("GET", "/health", { key: null });
  expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  const hostile = await t.request("GET", "/nowhere", { key: null, headers: { "x-request-id": "a\u0001b" + "x".repeat(300) } });
  expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  const error = await t.json("GET", "/api/v1/usage", { key: null, headers: { "x-request-id": "req-42" } });
  expect(error.headers.get("x-request-id")).toBe("req-42");
  expect(error.body.requestId).toBe("req-42");
});

test("one JSON log line per request with method, path, status, duration, request id and account", async () => {
  t.logLines.length = 0;
  await t.request("GET", "/api/v1/usage", { headers: { "x-request-id": "log-me" } });
  await Bun.sleep(5);
  const lines = t.logLines.map((line) => JSON.parse(line)).filter((entry) => entry.requestId === "log-me");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ msg: "request", method: "GET", path: "/api/v1/usage", status: 200, accountId: "acc_default" });
  expect(lines[0].durationMs).toBeNumber();
});

/** Every status a problem can be made with in src/: `new HttpError(<status>, …` (over line breaks too) and a worker's `status: <4xx|5xx>`. */
function statusesThrownInSource(): number[] {
  const src = resolve(import.meta.dir, "../../src");
  const found = new Set<number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) {
        const text = readFileSync(path, "utf8");
        for (const [, status] of text.matchAll(/HttpError\(\s*(\d{3})\b/g)) found.add(Number(status));
        for (const [, status] of text.matchAll(/\bstatus: ([45]\d\d)\b/g)) found.add(Number(status));
      }
    }
  };
  walk(src);
  return [...found].sort();
}

test("every problem status has its reason phrase as title, never 'Error': each in the map and each the code throws", async () => {
  const thrown = statusesThrownInSource();
  // the scan finds what it should: the statuses whose title was once missing among them
  expect(thrown).toEqual(
    expect.arrayContaining([400, 401, 402, 403, 404, 405, 408, 409, 410, 412, 413, 415, 416, 422, 429, 499, 500, 503, 507]),
  );
  const statuses = [...new Set([...thrown, ...Object.keys(STATUS_TITLES).map(Number)])];
  const titles = await Promise.all(
    statuses.map(async (status) => [
      status,
      ((await problemResponse(new HttpError(status, "x", "x"), "id").json()) as { title: string }).title,
    ]),
  );
  expect(titles.filter(([, title]) => title === "Error" || !title)).toEqual([]);
  expect(Object.fromEntries(titles.filter(([status]) => [410, 416, 422].includes(status as number)))).toEqual({
    410: "Gone",
    416: "Range Not Satisfiable",
    422: "Unprocessable Content",
  });
});

test("a 422 and a 410 on the wire carry their titles", async () => {
  const { key } = await t.newAccount();
  const headers = { "Idempotency-Key": `titles-${Bun.randomUUIDv7()}` };
  expect((await t.json("POST", "/api/v1/documents", { key, headers, body: { name: "a", content: 1 } })).status).toBe(201);
  const reused = await t.json("POST", "/api/v1/documents", { key, headers, body: { name: "b", content: 2 } });
  expect(reused.body).toMatchObject({ status: 422, code: "idempotency_key_reused", title: "Unprocessable Content" });
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "linked", content: 1 } });
  const link = await t.json("POST", `/api/v1/documents/${created.body.document.id}/links`, { key, body: { expiresIn: 60 } });
  expect((await t.json("DELETE", `/api/v1/documents/${created.body.document.id}`, { key })).status).toBe(200);
  const gone = await t.json("GET", new URL(link.body.url).pathname + new URL(link.body.url).search, { key: null });
  expect(gone.body).toMatchObject({ status: 410, code: "link_outdated", title: "Gone" });
});

test("a deadlock, serialization failure, lock or statement timeout in the database is 503 database_busy with Retry-After, and nothing is written", async () => {
  const { key } = await t.newAccount();
  const { sql } = t.testDb.database;
  // PostgreSQL itself raises the conflict, as a deadlock victim's statement gets it, for documents so named
  await sql.unsafe(`
    create function test_conflict() returns trigger language plpgsql as $$
    begin
      if NEW.name = 'deadlock victim' then raise exception 'deadlock detected' using errcode = '40P01'; end if;
      if NEW.name = 'serialization victim' then raise exception 'could not serialize' using errcode = '40001'; end if;
      if NEW.name = 'lock victim' then raise exception 'canceling statement due to lock timeout' using errcode = '55P03'; end if;
      if NEW.name = 'statement victim' then raise exception 'canceling statement due to statement timeout' using errcode = '57014'; end if;
      return NEW;
    end $$;
    create trigger test_conflict before insert on documents for each row execute function test_conflict();`);
  try {
    for (const name of ["deadlock victim", "serialization victim", "lock victim", "statement victim"]) {
      const res = await t.json("POST", "/api/v1/documents", { key, body: { name, content: { a: 1 } } });
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.body).toMatchObject({ success: false, status: 503, code: "database_busy" });
    }
    const listed = await t.json("GET", "/api/v1/documents", { key });
    expect(listed.body.documents).toEqual([]);
    expect((await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes).toBe(0);
    expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "not a victim", content: 1 } })).status).toBe(201);
  } finally {
    await sql.unsafe("drop trigger test_conflict on documents; drop function test_conflict();");
  }
});
