/** Signed download links: made with a key, fetched without one, until they expire or the content changes. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { clusterSecrets } from "../../../src/db/schema";
import { LINK_EXPIRES_IN_MAX } from "../../../src/modules/documents/links";
import { createTestApp, type TestApp } from "../../support/app";

let clock = 1_800_000_000_000;
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
  ({ key } = await t.newAccount({ permissions: ["documents"] }));
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const CONTENT = '{"big":12345678901234567890,"f":1.0,"name":"Zoë"}';

async function newDocument(content = CONTENT): Promise<string> {
  return (await t.json("POST", DOCS, { key, body: { name: "report 2024.json", contentText: content } })).body.document.id;
}

/** The link's path and query, to send to the in-process app (its origin is that of the request). */
const pathOf = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};

test("a link serves the content without a key, with the download's headers, until it expires", async () => {
  const id = await newDocument();
  const made = await t.json("POST", `${DOCS}/${id}/links`, { key, body: { expiresIn: 120 } });
  expect(made.status).toBe(201);
  // without PUBLIC_URL the base is the configured address, never the request's Host
  expect(made.body).toEqual({
    success: true,
    url: expect.stringMatching(/^http:\/\/localhost:3000\/links\/doc_/),
    expiresAt: clock + 120_000,
  });

  const viaLink = await t.request("GET", pathOf(made.body.url), { key: null });
  const viaKey = await t.request("GET", `${DOCS}/${id}/content`, { key });
  expect(viaLink.status).toBe(200);
  const bytes = new Uint8Array(await viaLink.arrayBuffer());
  expect(new TextDecoder().decode(bytes)).toBe(CONTENT);
  expect(bytes).toEqual(new Uint8Array(await viaKey.arrayBuffer()));
  for (const header of ["content-type", "content-length", "etag", "content-disposition"]) {
    expect(viaLink.headers.get(header)).toBe(viaKey.headers.get(header));
  }
  const etag = viaLink.headers.get("etag")!;
  const cached = await t.request("GET", pathOf(made.body.url), { key: null, headers: { "if-none-match": etag } });
  expect(cached.status).toBe(304);
  expect(cached.headers.get("etag")).toBe(etag);

  clock += 119_000;
  expect((await t.request("GET", pathOf(made.body.url), { key: null })).status).toBe(200);
  clock += 1_000;
  const expired = await t.json("GET", pathOf(made.body.url), { key: null });
  expect(expired.status).toBe(410);
  expect(expired.headers.get("content-type")).toBe("application/problem+json");
  expect(expired.body.code).toBe("link_expired");
});

test("default expiry is one hour; an empty body or {} is accepted", async () => {
  const id = await newDocument();
  expect((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.expiresAt).toBe(clock + 3_600_000);
  expect((await t.json("POST", `${DOCS}/${id}/links`, { key, body: {} })).body.expiresAt).toBe(clock + 3_600_000);
  expect((await t.json("POST", `${DOCS}/${id}/links`, { key, body: { expiresIn: 86_400 } })).body.expiresAt).toBe(clock + 86_400_000);
});

test("bad bodies are 400: unknown fields, expiresIn out of range or not an integer", async () => {
  const id = await newDocument();
  for (const body of [
    { expiresIn: 59 },
    { expiresIn: 86_401 },
    { expiresIn: 90.5 },
    { expiresIn: "600" },
    { expiresIn: 600, extra: 1 },
    [],
    "x",
  ]) {
    const answer = await t.json("POST", `${DOCS}/${id}/links`, { key, body });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("validation_failed");
  }
  expect((await t.json("POST", `${DOCS}/${id}/links`, { key, rawBody: "{" })).body.code).toBe("malformed_json");
});

test("permission and ownership: no key 401, key without documents 403, another account's document 404", async () => {
  const id = await newDocument();
  expect((await t.request("POST", `${DOCS}/${id}/links`, { key: null })).status).toBe(401);
  const utilitiesOnly = await t.newAccount({ permissions: ["utilities"] });
  expect((await t.request("POST", `${DOCS}/${id}/links`, { key: utilitiesOnly.key })).status).toBe(403);
  const other = await t.newAccount({ permissions: ["documents"] });
  const foreign = await t.json("POST", `${DOCS}/${id}/links`, { key: other.key });
  expect(foreign.status).toBe(404);
  expect(foreign.body.code).toBe("document_not_found");
  expect((await t.json("POST", `${DOCS}/doc_missing/links`, { key })).status).toBe(404);
});

test("tampered or incomplete links are 403 link_invalid", async () => {
  const id = await newDocument();
  const url = new URL((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.url);
  const variants: URL[] = [];
  const edit = (change: (candidate: URL) => void) => {
    const copy = new URL(url);
    change(copy);
    variants.push(copy);
  };
  edit((u) => u.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 1000)));
  edit((u) =>
    u.searchParams.set(
      "sig",
      u.searchParams.get("sig")!.replace(/^./, (c) => (c === "A" ? "B" : "A")),
    ),
  );
  edit((u) => u.searchParams.set("v", "0123456789abcdef"));
  edit((u) => u.searchParams.delete("sig"));
  edit((u) => u.searchParams.delete("expires"));
  edit((u) => u.searchParams.set("expires", "soon"));
  edit((u) => {
    u.search = "";
  });
  const otherId = await newDocument();
  edit((u) => {
    u.pathname = `/links/${otherId}`;
  });
  for (const variant of variants) {
    const answer = await t.json("GET", variant.pathname + variant.search, { key: null });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("link_invalid");
  }
});

test("a link stops working when the content changes or the document is deleted (410 link_outdated)", async () => {
  const id = await newDocument();
  const before = pathOf((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.url);
  expect((await t.request("PUT", `${DOCS}/${id}`, { key, body: { name: "renamed.json" } })).status).toBe(200);
  expect((await t.request("GET", before, { key: null })).status).toBe(200); // metadata changes keep it
  expect((await t.request("PUT", `${DOCS}/${id}/content`, { key, rawBody: "[1,2,3]" })).status).toBe(200);
  const outdated = await t.json("GET", before, { key: null });
  expect(outdated.status).toBe(410);
  expect(outdated.body.code).toBe("link_outdated");

  const after = pathOf((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.url);
  expect(await (await t.request("GET", after, { key: null })).text()).toBe("[1,2,3]");
  expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
  expect((await t.json("GET", after, { key: null })).body.code).toBe("link_outdated");
  expect((await t.request("POST", `${DOCS}/${id}/restore`, { key })).status).toBe(200);
  // restored with the same content, the link made before the delete stays dead; a new one works
  expect((await t.json("GET", after, { key: null })).body.code).toBe("link_outdated");
  const fresh = pathOf((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.url);
  expect(await (await t.request("GET", fresh, { key: null })).text()).toBe("[1,2,3]");
});

test("the request's Host never becomes a link's base, nor any forwarding header", async () => {
  const id = await newDocument();
  const request = new Request(`http://evil.example/api/v1/documents/${id}/links`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      host: "evil.example",
      "x-forwarded-host": "evil.example",
      "x-forwarded-proto": "https",
      forwarded: "host=evil.example;proto=https",
    },
  });
  const made = await t.app.handle(request);
  expect(made.status).toBe(201);
  const { url } = (await made.json()) as { url: string };
  expect(url).not.toContain("evil.example");
  expect(new URL(url).origin).toBe("http://localhost:3000");
});

/** A link for `id` signed with the deployment's own secret (as one who stole it could), expiring at `expires`. */
async function forgedLink(id: string, expires: number): Promise<string> {
  const made = new URL((await t.json("POST", `${DOCS}/${id}/links`, { key })).body.url);
  const [{ secret }] = await t.testDb.database.db
    .select({ secret: clusterSecrets.secret })
    .from(clusterSecrets)
    .where(eq(clusterSecrets.name, "download_links"));
  const tag = made.searchParams.get("v")!;
  const sig = new Bun.CryptoHasher("sha256", Buffer.from(secret, "base64")).update(`${id}\n${tag}\n${expires}`).digest("base64url");
  return `/links/${id}?v=${tag}&expires=${expires}&sig=${sig}`;
}

test("an expiry further ahead than the longest lifetime is refused at check time, whatever its signature", async () => {
  const id = await newDocument();
  expect((await t.request("GET", await forgedLink(id, clock + LINK_EXPIRES_IN_MAX * 1000), { key: null })).status).toBe(200);
  for (const expires of [clock + LINK_EXPIRES_IN_MAX * 1000 + 1, clock + 10 * 365 * 86_400_000]) {
    const ahead = await t.json("GET", await forgedLink(id, expires), { key: null });
    expect([ahead.status, ahead.body.code]).toEqual([403, "link_invalid"]);
  }
  // a link made honestly is refused too if the clock goes back (or the longest lifetime was shortened) past it
  const made = pathOf((await t.json("POST", `${DOCS}/${id}/links`, { key, body: { expiresIn: LINK_EXPIRES_IN_MAX } })).body.url);
  clock -= 60_000;
  expect((await t.json("GET", made, { key: null })).body.code).toBe("link_invalid");
  clock += 60_000;
  expect((await t.request("GET", made, { key: null })).status).toBe(200);
});

test("PUBLIC_URL sets the links' base; the route is in /openapi.json with its statuses", async () => {
  const withBase = await createTestApp({ PUBLIC_URL: "https://files.example.com/" });
  try {
    const admin = await withBase.newAccount({ permissions: ["documents"] });
    const id = (await withBase.json("POST", DOCS, { key: admin.key, body: { name: "a", content: 1 } })).body.document.id;
    const made = await withBase.json("POST", `${DOCS}/${id}/links`, { key: admin.key });
    expect(made.body.url).toStartWith(`https://files.example.com/links/${id}?`);
  } finally {
    await withBase.close();
  }
  const spec = (await t.json("GET", "/openapi.json", { key: null })).body;
  expect(Object.keys(spec.paths["/api/v1/documents/{id}/links"].post.responses)).toEqual(
    expect.arrayContaining(["201", "400", "401", "403", "404", "429"]),
  );
  expect(Object.keys(spec.paths["/links/{id}"].get.responses)).toEqual(expect.arrayContaining(["200", "304", "403", "410"]));
  expect(Object.keys(spec.paths["/links/{id}"].get.responses)).not.toContain("401");
  expect(spec.paths["/links/{id}"].get.security).toEqual([]);
});
