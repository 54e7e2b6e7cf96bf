/**
 * Tenant isolation matrix (issue 8 §3): account B's key against account A's active, soft-deleted and
 * purged documents on every document endpoint and method, and against A's cursors, folders and usage:
 * 404 or an empty list, never A's data, and A's documents untouched afterwards. Every permission set
 * against every area: 403 exactly when the permission is missing. Keys in the query string are never read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Permission } from "../../src/core/plans";
import { DOCUMENT_ENDPOINTS, ENDPOINTS } from "../reliability/support/endpoints";
import { answerViolations } from "../reliability/support/problem";
import { createTestApp, type TestApp } from "../support/app";

/** Strings that only A's data holds: none may appear in anything B receives. */
const SECRET = {
  name: "A-SECRET-NAME.json",
  content: "A-SECRET-CONTENT",
  folder: "a-secret-folder/inner",
  description: "A-SECRET-DESCRIPTION",
  tag: "a-secret-tag",
};
const SECRET_MARKERS = ["A-SECRET", "a-secret"];

let t: TestApp;
let a: { accountId: string; key: string };
let b: { accountId: string; key: string };
const docs: Record<"active" | "deleted" | "purged", string> = { active: "", deleted: "", purged: "" };
let cursorOfA = "";
let casesChecked = 0;

async function createSecret(key: string, suffix: string): Promise<string> {
  const created = await t.json("POST", "/api/v1/documents", {
    key,
    body: {
      name: `${suffix}-${SECRET.name}`,
      content: { secret: SECRET.content },
      folder: SECRET.folder,
      description: SECRET.description,
      tags: [SECRET.tag],
    },
  });
  expect(created.status).toBe(201);
  return created.body.document.id;
}

beforeAll(async () => {
  t = await createTestApp();
  a = await t.newAccount({ permissions: ["documents", "utilities"], rateLimitPerMinute: null });
  b = await t.newAccount({ permissions: ["documents", "utilities"], rateLimitPerMinute: null });
  for (const state of ["active", "deleted", "purged"] as const) docs[state] = await createSecret(a.key, state);
  await createSecret(a.key, "extra");
  expect((await t.json("DELETE", `/api/v1/documents/${docs.deleted}`, { key: a.key })).status).toBe(200);
  expect((await t.json("DELETE", `/api/v1/documents/${docs.purged}`, { key: a.key })).status).toBe(200);
  expect((await t.json("POST", `/api/v1/documents/${docs.purged}/purge`, { key: a.key })).status).toBe(200);
  const page = await t.json("GET", "/api/v1/documents?limit=1", { key: a.key });
  expect(page.body.nextCursor).toEqual(expect.any(String));
  cursorOfA = page.body.nextCursor;
  expect(
    (await t.json("POST", "/api/v1/utilities/schema.clean-json", { key: a.key, body: { inputs: { primary: { a: null } } } })).status,
  ).toBe(200);
});
afterAll(async () => {
  console.log(`isolation: ${casesChecked} cross-account and permission cases checked, 0 leaks`);
  await t.close();
});

/** B's request: checked for the contract and for any trace of A's data. */
async function asB(method: string, path: string, body?: unknown, key = b.key) {
  const response = await t.request(method, path, { key, body });
  const text = await response.text();
  casesChecked++;
  expect(answerViolations(response.status, response.headers, text)).toEqual([]);
  for (const marker of SECRET_MARKERS) expect(text).not.toContain(marker);
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

describe("B against A's documents", () => {
  for (const state of ["active", "deleted", "purged"] as const) {
    test.each(DOCUMENT_ENDPOINTS.map((endpoint) => [endpoint.method, endpoint.path, endpoint] as const))(
      `${state} document: %s %s → 404`,
      async (method, path, endpoint) => {
        const body = endpoint.validBody?.();
        const answer = await asB(method, path.replace(":id", docs[state]), body);
        expect(answer.status).toBe(404);
        // conditional headers do not reveal existence either
        const conditional = await t.request(method, path.replace(":id", docs[state]), {
          key: b.key,
          body,
          headers: { "if-match": "*", "if-none-match": "*" },
        });
        casesChecked++;
        expect(conditional.status).toBe(404);
      },
    );
  }

  test("A's documents are untouched by B's attempts", async () => {
    const active = await t.json("GET", `/api/v1/documents/${docs.active}`, { key: a.key });
    expect(active.status).toBe(200);
    expect(active.body.document.name).toBe(`active-${SECRET.name}`);
    const content = await t.request("GET", `/api/v1/documents/${docs.active}/content`, { key: a.key });
    expect(await content.json()).toEqual({ secret: SECRET.content });
    const deleted = await t.json("GET", "/api/v1/documents?deleted=true", { key: a.key });
    expect(deleted.body.documents.map((doc: { id: string }) => doc.id)).toEqual([docs.deleted]);
  });
});

describe("B's lists, cursors, folders and usage hold nothing of A's", () => {
  test.each([
    "/api/v1/documents",
    "/api/v1/documents?deleted=true",
    `/api/v1/documents?folder=${encodeURIComponent(SECRET.folder)}`,
    "/api/v1/documents?folder=a-secret-folder",
    "/api/v1/documents?limit=200",
  ])("GET %s → an empty list", async (path) => {
    const answer = await asB("GET", path);
    expect(answer.status).toBe(200);
    expect(answer.body.documents).toEqual([]);
    expect(answer.body.nextCursor).toBeNull();
  });

  test("A's cursor: 400 or an empty page, never A's documents", async () => {
    for (const path of [
      `/api/v1/documents?cursor=${cursorOfA}`,
      `/api/v1/documents?cursor=${cursorOfA}&folder=${encodeURIComponent(SECRET.folder)}`,
      `/api/v1/documents?cursor=${cursorOfA}&deleted=true`,
    ]) {
      const answer = await asB("GET", path);
      if (answer.status === 200) expect(answer.body.documents).toEqual([]);
      else expect(answer.status).toBe(400);
    }
  });

  test("folders: none of A's", async () => {
    const answer = await asB("GET", "/api/v1/folders");
    expect(answer.status).toBe(200);
    expect(answer.body.folders).toEqual([]);
  });

  test("usage: B's own storage and credits, not A's", async () => {
    const answer = await asB("GET", "/api/v1/usage");
    expect(answer.status).toBe(200);
    expect(answer.body.storage.usedBytes).toBe(0);
    expect(answer.body.credits.used).toBe(0);
    const ofA = await t.json("GET", "/api/v1/usage", { key: a.key });
    expect(ofA.body.storage.usedBytes).toBeGreaterThan(0);
    expect(ofA.body.credits.used).toBe(1);
  });

  test("B's own writes never land in A's account", async () => {
    const created = await asB("POST", "/api/v1/documents", {
      name: "b.json",
      content: { b: 1 },
      folder: SECRET.folder.replace("a-secret", "shared"),
    });
    expect(created.status).toBe(201);
    const listOfA = await t.json("GET", "/api/v1/documents?limit=200", { key: a.key });
    expect(listOfA.body.documents.map((doc: { id: string }) => doc.id)).not.toContain(created.body.document.id);
    expect((await t.json("GET", `/api/v1/documents/${created.body.document.id}`, { key: a.key })).status).toBe(404);
  });
});

const PERMISSION_SETS: Permission[][] = [
  [],
  ["documents"],
  ["utilities"],
  ["admin"],
  ["documents", "utilities"],
  ["documents", "admin"],
  ["utilities", "admin"],
];

describe("each permission against each area", () => {
  test.each(PERMISSION_SETS.map((set) => [set.join("+") || "none", set] as const))(
    "key with %s: 403 exactly where a permission is missing",
    async (_label, permissions) => {
      const { key } = await t.newAccount({ permissions, rateLimitPerMinute: null });
      for (const endpoint of ENDPOINTS) {
        if (endpoint.permission === undefined) continue;
        const path = endpoint.path.replace(":id", docs.active).replace(":utilityId", "schema.clean-json");
        const answer = await asB(endpoint.method, path, endpoint.validBody?.(), key);
        const allowed =
          (endpoint.permission === null || permissions.includes(endpoint.permission)) &&
          (endpoint.alsoNeeds === undefined || permissions.includes(endpoint.alsoNeeds));
        if (allowed) expect({ path, status: answer.status }).not.toEqual({ path, status: 403 });
        else expect({ path, status: answer.status, code: answer.body.code }).toEqual({ path, status: 403, code: "forbidden" });
      }
    },
  );
});

describe("keys in the query string are never read", () => {
  const PARAMS = ["access_token", "api_key", "apiKey", "key", "token", "authorization"];
  test.each(PARAMS)("?%s=<A's key> without a header → 401 (access_token: 400 token_in_query)", async (param) => {
    const answer = await asB("GET", `/api/v1/documents?${param}=${a.key}`, undefined, null as unknown as string);
    expect(answer.status).toBe(param === "access_token" ? 400 : 401);
  });
  test.each(PARAMS)("?%s=<A's key> with B's header → B's view, not A's", async (param) => {
    const answer = await asB("GET", `/api/v1/documents/${docs.active}?${param}=${a.key}`);
    expect([400, 404]).toContain(answer.status);
  });
});
