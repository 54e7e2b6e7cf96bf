/** Indexes and queries through the API: declare, build, query, page, the errors, and another account's view. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { buildNow } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const INDEXES = "/api/v1/indexes";
const QUERY = "/api/v1/documents/query";

async function create(key: string, folder: string, content: string, name = "d") {
  const response = await t.request("POST", "/api/v1/documents", {
    key,
    rawBody: `{"name":${JSON.stringify(name)},"folder":${JSON.stringify(folder)},"content":${content}}`,
    headers: { "content-type": "application/json" },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { document: { id: string } }).document.id;
}

const query = (key: string, body: unknown) => t.json("POST", QUERY, { key, body });
const rawQuery = (key: string, text: string) =>
  t.request("POST", QUERY, { key, rawBody: text, headers: { "content-type": "application/json" } });

describe("declaring an index", () => {
  test("202 with Location; building on a folder with documents, then ready with index.ready", async () => {
    const { key } = await t.newAccount();
    await create(key, "orders", `{"price": 10}`);
    const created = await t.json("POST", INDEXES, { key, body: { folder: "orders", fields: [{ path: "/price" }] } });
    expect(created.status).toBe(202);
    expect(created.headers.get("location")).toBe(`${INDEXES}/${created.body.index.id}`);
    expect(created.body.index).toMatchObject({
      folder: "orders",
      name: "orders.by_price",
      fields: [{ path: "/price", order: "asc" }],
      unique: false,
      state: "building",
      progress: { processed: 0, total: 1 },
    });
    const building = await query(key, { folder: "orders", filter: { "/price": 10 } });
    expect(building.status).toBe(409);
    expect(building.body).toMatchObject({ code: "index_building", progress: { processed: 0, total: 1 } });
    await buildNow(t);
    const got = await t.json("GET", `${INDEXES}/${created.body.index.id}`, { key });
    expect(got.body.index).toMatchObject({ state: "ready", progress: { processed: 1, total: 1 } });
    const events = await t.json("GET", "/api/v1/events?type=index.ready", { key });
    expect(events.body.events.map((event: { type: string }) => event.type)).toContain("index.ready");
  });

  test("an index on an empty folder is ready at once; list, get, delete; another account sees none of it", async () => {
    const { key } = await t.newAccount();
    const other = await t.newAccount();
    const created = await t.json("POST", INDEXES, {
      key,
      body: { folder: "empty", name: "mine", fields: [{ path: "/a" }, { path: "/b", order: "desc" }] },
    });
    expect(created.body.index.state).toBe("ready");
    const id = created.body.index.id;
    expect((await t.json("GET", INDEXES, { key })).body.indexes.map((index: { id: string }) => index.id)).toEqual([id]);
    expect((await t.json("GET", INDEXES, { key: other.key })).body.indexes).toEqual([]);
    expect((await t.json("GET", `${INDEXES}/${id}`, { key: other.key })).status).toBe(404);
    expect((await t.json("DELETE", `${INDEXES}/${id}`, { key: other.key })).status).toBe(404);
    expect((await t.json("POST", INDEXES, { key, body: { folder: "x", name: "mine", fields: [{ path: "/a" }] } })).body.code).toBe(
      "index_name_taken",
    );
    expect((await t.json("DELETE", `${INDEXES}/${id}`, { key })).status).toBe(200);
    expect((await t.json("GET", `${INDEXES}/${id}`, { key })).status).toBe(404);
  });

  test("bad fields are 400 naming them; past maxIndexes 409", async () => {
    const { key } = await t.newAccount({ maxIndexes: 1 });
    const bad = await t.json("POST", INDEXES, { key, body: { folder: "f", fields: [{ path: "/a" }, { path: "/a" }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ path: "/fields/1/path", message: "/a is already a field of the index" }]);
    const five = await t.json("POST", INDEXES, {
      key,
      body: { folder: "f", fields: ["/a", "/b", "/c", "/d", "/e"].map((path) => ({ path })) },
    });
    expect(five.status).toBe(400);
    expect((await t.json("POST", INDEXES, { key, body: { folder: "f", fields: [{ path: "/a" }] } })).status).toBe(202);
    const over = await t.json("POST", INDEXES, { key, body: { folder: "g", name: "second", fields: [{ path: "/a" }] } });
    expect(over.status).toBe(409);
    expect(over.body.code).toBe("index_limit_reached");
  });
});

describe("queries", () => {
  let key: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ({ key } = await t.newAccount());
    await t.json("POST", INDEXES, { key, body: { folder: "shop", fields: [{ path: "/country" }, { path: "/price" }] } });
    const docs: [string, string][] = [
      ["fr1", `{"country":"FR","price":120.5,"sku":"A1"}`],
      ["fr2", `{"country":"FR","price":99,"sku":"A2"}`],
      ["fr3", `{"country":"FR","price":12345678901234567891,"sku":"A3"}`],
      ["fr4", `{"country":"FR","price":"150","sku":"A4"}`],
      ["de1", `{"country":"DE","price":1.0,"sku":"B1"}`],
      ["nested", `{"country":"FR","price":100.0,"sku":"C1"}`],
    ];
    for (const [name, content] of docs) ids[name] = await create(key, name === "nested" ? "shop/sub" : "shop", content, name);
  });

  test("equality then range then sort on the next field: exact numbers, types apart, subfolders in", async () => {
    const answer = await rawQuery(
      key,
      `{"folder":"shop","filter":{"/country":"FR","/price":{"$gt":100}},"sort":[{"path":"/price","order":"desc"}],"fields":["/price","/sku"]}`,
    );
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(text).toContain(`"fields":{"/price":12345678901234567891,"/sku":"A3"}`);
    const body = JSON.parse(text);
    expect(body.documents.map((d: { name: string }) => d.name)).toEqual(["fr3", "fr1"]);
    expect(body.nextCursor).toBeNull();
    expect(body.documents[0]).toMatchObject({ id: ids.fr3, folder: "shop", version: 1 });
  });

  test("1.0 equals 1; a number never matches a string", async () => {
    const one = await query(key, { folder: "shop", filter: { "/country": "DE", "/price": 1 } });
    expect(one.body.documents.map((d: { name: string }) => d.name)).toEqual(["de1"]);
    const nested = await rawQuery(key, `{"folder":"shop","filter":{"/country":"FR","/price":100}}`);
    expect(((await nested.json()) as { documents: { name: string }[] }).documents.map((d: { name: string }) => d.name)).toEqual(["nested"]);
    const strings = await query(key, { folder: "shop", filter: { "/country": "FR", "/price": { $gte: "1" } } });
    expect(strings.body.documents.map((d: { name: string }) => d.name)).toEqual(["fr4"]);
  });

  test("pages follow the cursor, nothing repeated or lost; count capped is exact here", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await query(key, { folder: "shop", filter: { "/country": "FR" }, limit: 2, cursor, count: "capped" });
      expect(page.status).toBe(200);
      expect(page.body.count).toEqual({ value: 5, exact: true });
      seen.push(...page.body.documents.map((d: { name: string }) => d.name));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["fr2", "nested", "fr1", "fr3", "fr4"]);
  });

  test("explain names the index and why others were not chosen", async () => {
    const answer = await query(key, { folder: "shop", filter: { "/country": "FR" }, explain: true, limit: 1 });
    expect(answer.body.explain).toMatchObject({ equalities: 1, range: false, considered: [{ usable: true, why: "chosen" }] });
  });

  test("no index serves it: 400 query_needs_index whose suggestedIndex, POSTed, serves it", async () => {
    const body = { folder: "shop", filter: { "/sku": "A1" }, sort: [{ path: "/price", order: "desc" }] };
    const refused = await query(key, body);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("query_needs_index");
    expect(refused.body.suggestedIndex).toEqual({ folder: "shop", fields: [{ path: "/sku" }, { path: "/price", order: "desc" }] });
    expect((await t.json("POST", INDEXES, { key, body: refused.body.suggestedIndex })).status).toBe(202);
    await buildNow(t);
    const served = await query(key, body);
    expect(served.status).toBe(200);
    expect(served.body.documents.map((d: { name: string }) => d.name)).toEqual(["fr1"]);
  });

  test("$regex, $where, $expr and unknown operators: 400 query_invalid pointing into the body", async () => {
    for (const op of ["$regex", "$where", "$expr", "$near"]) {
      const refused = await query(key, { folder: "shop", filter: { $and: [{ "/sku": { [op]: "A" } }] } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe("query_invalid");
      expect(refused.body.errors[0].path).toBe(`/filter/$and/0/~1sku/${op}`);
    }
    const array = await query(key, { folder: "shop", filter: { "/sku": { $eq: ["A"] } } });
    expect(array.body.errors).toEqual([{ path: "/filter/~1sku/$eq", message: expect.stringContaining("array") }]);
  });

  test("another account's query sees nothing of this one (its own folder has no index)", async () => {
    const other = await t.newAccount();
    const refused = await query(other.key, { folder: "shop", filter: { "/country": "FR" } });
    expect(refused.body.code).toBe("query_needs_index");
  });
});
