/**
 * API keys never leave a trace (issue 8 §6): no log line of a run holds any key used in it (valid,
 * invalid, revoked, from headers or query strings, on successes and on errors), and the database
 * holds only SHA-256 hashes: a dump of every table contains no key. The real server is checked too,
 * on its own stdout and stderr at debug level.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startRunServer } from "../reliability/support/run-server";
import { ADMIN_KEY, createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: "debug" });
});
afterAll(async () => {
  await t.close();
});

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/** Every request shape a key can travel in; returns the keys used. */
async function exercise(
  send: (method: string, path: string, key: string | null, body?: unknown) => Promise<{ status: number; body: any }>,
  adminKey: string,
): Promise<string[]> {
  const keys = [adminKey];
  const account = await send("POST", "/api/v1/admin/accounts", adminKey, { name: "secrets" });
  for (const permissions of [["documents", "utilities"], ["utilities"], ["documents"]]) {
    const created = await send("POST", "/api/v1/admin/keys", adminKey, { accountId: account.body.account.id, permissions });
    expect(created.status).toBe(201);
    keys.push(created.body.key);
  }
  const [full, utilitiesOnly, toRevoke] = keys.slice(1);
  const wrong = `kiln_${"W".repeat(20)}${Bun.randomUUIDv7().replaceAll("-", "")}`;
  keys.push(wrong);
  const revoked = await send("GET", `/api/v1/admin/keys?accountId=${account.body.account.id}`, adminKey);
  const revokeId = revoked.body.keys.at(-1).id;
  expect((await send("DELETE", `/api/v1/admin/keys/${revokeId}`, adminKey)).status).toBe(200);

  const created = await send("POST", "/api/v1/documents", full, { name: "doc.json", content: { a: 1 } });
  for (const [method, path, key, body] of [
    ["GET", "/api/v1/usage", full],
    ["GET", "/api/v1/documents", full],
    ["GET", `/api/v1/documents/${created.body?.document?.id ?? "doc_none"}/content`, full],
    ["POST", "/api/v1/documents", full, { name: "\u0000bad" }],
    ["GET", "/api/v1/documents", utilitiesOnly],
    ["GET", "/api/v1/documents", toRevoke],
    ["GET", "/api/v1/documents", wrong],
    ["GET", `/api/v1/documents?access_token=${full}&api_key=${full}`, null],
    ["POST", "/api/v1/utilities/schema.clean-json", full, { inputs: { primary: { a: null, pad: "x".repeat(3000) } } }],
    ["POST", "/api/v1/utilities/nope.nothing", full, {}],
    ["GET", "/api/v1/admin/accounts/acc_missing", adminKey],
  ] as [string, string, string | null, unknown?][])
    await send(method, path, key, body);
  return keys;
}

function expectNoKey(text: string, keys: string[]) {
  for (const key of keys) {
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice("kiln_".length));
  }
}

test("no log line holds a key; the database holds only their SHA-256 hashes", async () => {
  const keys = await exercise((method, path, key, body) => t.json(method, path, { key, body }), ADMIN_KEY);
  expect(t.logLines.length).toBeGreaterThan(10);
  expectNoKey(t.logLines.join("\n"), keys);

  const sql = t.testDb.database.sql;
  const tables = await sql<{ table_name: string }[]>`select table_name from information_schema.tables where table_schema = 'public'`;
  let dump = "";
  for (const { table_name } of tables) {
    const rows = await sql.unsafe(`select row_to_json(x)::text as row from "${table_name}" x`);
    dump += rows.map((row) => row.row).join("\n");
  }
  expectNoKey(dump, keys);
  const hashes = (await sql<{ key_hash: string }[]>`select key_hash from api_keys`).map((row) => row.key_hash);
  for (const key of keys.filter((key) => !key.startsWith("kiln_WWWW"))) expect(hashes).toContain(sha256(key));
});

test("the real server, at debug level, prints no key it was given (BOOTSTRAP_API_KEY included)", async () => {
  const run = await startRunServer({ LOG_LEVEL: "debug" });
  try {
    const keys = await exercise(async (method, path, key, body) => {
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      if (body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(run.server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    }, run.bootstrapKey);
    await run.server.stop("SIGTERM");
    expect(run.server.output()).toContain('"msg":"request"');
    expectNoKey(run.server.output() + run.server.errors(), keys);
  } finally {
    await run.close();
  }
}, 90_000);
