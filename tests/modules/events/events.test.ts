import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { sweepExpiredEvents } from "../../../src/modules/events/service";
import { createTestApp, type TestApp } from "../../support/app";
import { serverUrl } from "../../support/database";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const EVENTS = "/api/v1/events";

/** Every event visible after `after`, walking pages of `limit`; the cursor to resume from. */
async function readAll(key: string, query = "", after = "", limit = 500): Promise<{ events: any[]; cursor: string }> {
  const events: any[] = [];
  let cursor = after;
  for (;;) {
    const page = await t.json("GET", `${EVENTS}?limit=${limit}${cursor ? `&after=${cursor}` : ""}${query}`, { key });
    expect(page.status).toBe(200);
    events.push(...page.body.events);
    cursor = page.body.nextCursor;
    if (!page.body.hasMore) return { events, cursor };
  }
}

describe("a document's life as events", () => {
  test("create, update, content replace, patch, delete, restore, delete and purge each write one event, in order, with metadata and no content", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const created = await t.json("POST", DOCS, { key, body: { name: "a", folder: "reports/2026", content: { secret: "s3cr3t" } } });
    const id = created.body.document.id;
    expect((await t.request("PUT", `${DOCS}/${id}`, { key, body: { name: "b" } })).status).toBe(200);
    expect((await t.request("PUT", `${DOCS}/${id}/content`, { key, body: { secret: "other" } })).status).toBe(200);
    const patched = await t.request("PATCH", `${DOCS}/${id}/content`, {
      key,
      rawBody: JSON.stringify([{ op: "add", path: "/x", value: 1 }]),
      headers: { "content-type": "application/json-patch+json" },
    });
    expect(patched.status).toBe(200);
    expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect((await t.request("POST", `${DOCS}/${id}/restore`, { key })).status).toBe(200);
    expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect((await t.request("POST", `${DOCS}/${id}/purge`, { key })).status).toBe(200);

    const { events } = await readAll(key);
    expect(events.map((event) => event.type)).toEqual([
      "document.created",
      "document.updated",
      "document.content_replaced",
      "document.content_replaced",
      "document.deleted",
      "document.restored",
      "document.deleted",
      "document.purged",
    ]);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9a-f-]{36}$/);
      expect(event.data.document.id).toBe(id);
      expect(event.data.document.folder).toBe("reports/2026");
      expect(JSON.stringify(event)).not.toContain("s3cr3t");
    }
    expect(events[0].data.document).toMatchObject({ name: "a", version: 1, tags: [] });
    expect(events[1].data.document).toMatchObject({ name: "b", version: 1 });
    expect(events[3].data.document).toMatchObject({ version: 3 });
    expect(events[4].data.document.deletedAt).toBeNumber();
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  });

  test("an event's document is the documents API's view of it after the change, with deletedAt and purgeAt while in the trash", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const created = await t.json("POST", DOCS, {
      key,
      body: { name: "v", description: "first", tags: ["x", "y"], folder: "views", content: [1, 2, 3] },
    });
    const id = created.body.document.id;
    const updated = await t.json("PUT", `${DOCS}/${id}`, { key, body: { description: null, tags: [] } });
    const deleted = await t.json("DELETE", `${DOCS}/${id}`, { key });
    const { events } = await readAll(key);
    expect(events.map((event) => event.data)).toEqual([
      { document: created.body.document },
      { document: updated.body.document },
      {
        document: { ...updated.body.document, updatedAt: expect.any(Number), deletedAt: expect.any(Number), purgeAt: deleted.body.purgeAt },
      },
    ]);
    expect(events[0].data.document).toMatchObject({ description: "first", tags: ["x", "y"], folder: "views", fileSize: 7 });
    expect(events[1].data.document).not.toHaveProperty("description");
  });

  test("an event written before its document's fields were kept apart (migration 0017) reads as it was stored", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const stored = {
      document: {
        id: "doc_before",
        name: "before",
        title: "before",
        tags: [],
        fileSize: 1,
        version: 1,
        createdAt: 1,
        updatedAt: 1,
        folder: null,
      },
    };
    await t.testDb.database.sql`
      insert into events (id, account_id, type, folder, data, created_at)
      values ('evt_before', ${accountId}, 'document.created', null, ${JSON.stringify(stored)}::jsonb, 1)`;
    const { events } = await readAll(key);
    expect(events.map((event) => [event.id, event.data])).toEqual([["evt_before", stored]]);
  });

  test("a refused write leaves no event", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], maxDocumentBytes: 10 });
    expect((await t.request("POST", DOCS, { key, body: { name: "big", content: "x".repeat(100) } })).status).toBe(413);
    const created = await t.json("POST", DOCS, { key, body: { name: "small", content: 1 } });
    const id = created.body.document.id;
    expect((await t.request("PUT", `${DOCS}/${id}`, { key, body: { name: "c" }, headers: { "if-match": '"nope"' } })).status).toBe(412);
    expect((await readAll(key)).events.map((event) => event.type)).toEqual(["document.created"]);
  });
});

describe("reading the feed", () => {
  test("pages resume by cursor; type and folder filters; only the families the key's permissions cover", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents", "utilities"] });
    for (const folder of ["a", "a/b", "ab", "c"]) await t.json("POST", DOCS, { key, body: { name: folder, folder, content: 1 } });
    const pipeline = await t.json("POST", "/api/v1/pipelines", {
      key,
      body: { name: "p", steps: [{ utility: "schema.clean-json" }] },
    });
    expect(pipeline.status).toBe(201);

    const paged = await readAll(key, "", "", 2);
    expect(paged.events.map((event) => event.type)).toEqual([...Array(4).fill("document.created"), "pipeline.created"]);
    expect((await readAll(key, "&folder=/a/")).events.map((event) => event.data.document.name)).toEqual(["a", "a/b"]);
    expect((await readAll(key, "&folder=a&recursive=true")).events.map((event) => event.data.document.name)).toEqual(["a", "a/b"]);
    expect((await readAll(key, "&folder=a&recursive=false")).events.map((event) => event.data.document.name)).toEqual(["a"]);
    expect((await readAll(key, "&type=pipeline.*")).events.map((event) => event.data.pipeline.name)).toEqual(["p"]);
    expect((await readAll(key, "&type=document.created,document.deleted")).events).toHaveLength(4);
    // nothing new: the same cursor comes back, and an empty page
    const again = await t.json("GET", `${EVENTS}?after=${paged.cursor}`, { key });
    expect(again.body).toMatchObject({ events: [], nextCursor: paged.cursor, hasMore: false });

    const documentsOnly = await t.newAccount({ permissions: ["utilities"] });
    expect((await readAll(documentsOnly.key)).events).toEqual([]);
    const keys = await t.json("POST", "/api/v1/admin/keys", {
      key: "kiln_TestBootstrapKey0123456789abcdefABCDEF",
      body: { accountId, permissions: ["utilities"] },
    });
    expect((await readAll(keys.body.key)).events.map((event) => event.type)).toEqual(["pipeline.created"]);
  });

  test("bad parameters are 400s naming them", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    for (const [query, path] of [
      ["after=nope", "/after"],
      ["type=document.exploded", "/type"],
      ["folder=a/../b", "/folder"],
      ["folder=a&recursive=no", "/recursive"],
      ["limit=0", "/limit"],
    ]) {
      const answer = await t.json("GET", `${EVENTS}?${query}`, { key });
      expect(answer.status).toBe(400);
      expect(answer.body.errors[0].path).toBe(path);
    }
    expect((await t.request("GET", EVENTS, { key: null })).status).toBe(401);
  });
});

describe("transactions that commit out of order", () => {
  test("an event whose transaction commits after a later one's is never skipped by a consumer resuming from its cursor", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const draft = await t.json("POST", DOCS, { key, body: { name: "draft", content: 1 } });
    const start = await readAll(key);
    const sql = postgres(t.testDb.url, { max: 1, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let renamed!: () => void;
    const renamedOnce = new Promise<void>((resolve) => (renamed = resolve));
    // the first writer takes its transaction id and its event's sequence number (a rename, which the
    // documents trigger announces), and waits before committing
    const slow = sql.begin(async (tx) => {
      await tx`update documents set name = 'slow' where id = ${draft.body.document.id}`;
      renamed();
      await released;
    });
    await renamedOnce;
    // a later writer commits first
    expect((await t.request("POST", DOCS, { key, body: { name: "fast", content: 1 } })).status).toBe(201);

    const before = await readAll(key, "", start.cursor);
    release();
    await slow;
    const after = await readAll(key, "", before.cursor);
    // listed in the order they committed: the later writer's event first, then the one that committed
    // last, after the cursor the consumer already holds (ordered by the event's own sequence, it would
    // fall behind that cursor and never be read)
    expect(before.events.map((event) => event.data.document.name)).toEqual(["fast"]);
    expect(after.events.map((event) => event.data.document.name)).toEqual(["slow"]);
    await sql.end();
  });
});

describe("what holds an account's feed back", () => {
  test("a transaction left open in another database of the server, or by another account, holds nothing back", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const other = await t.newAccount({ permissions: ["documents"] });
    const draft = await t.json("POST", DOCS, { key: other.key, body: { name: "other", content: 1 } });
    const start = await readAll(key);
    // the server's own database (postgres), another database than this file's
    const elsewhere = postgres(serverUrl(), { max: 1, onnotice: () => {} });
    const sameServer = postgres(t.testDb.url, { max: 1, onnotice: () => {} });
    try {
      // idle in transaction, each with a transaction id: one in another database, one of another account
      // that wrote an event and has not committed
      await elsewhere`begin`;
      await elsewhere`select pg_current_xact_id()`;
      await sameServer`begin`;
      await sameServer`update documents set name = 'held' where id = ${draft.body.document.id}`;
      expect((await t.json("POST", DOCS, { key, body: { name: "mine", content: 1 } })).status).toBe(201);
      const page = await readAll(key, "", start.cursor);
      expect(page.events.map((event) => event.data.document.name)).toEqual(["mine"]);
    } finally {
      await sameServer`rollback`.catch(() => {});
      await elsewhere`rollback`.catch(() => {});
      await sameServer.end();
      await elsewhere.end();
    }
  });
});

describe("cursors handed out before the feed was ordered by commit", () => {
  test("an old cursor (transaction id - seq) resumes right after its event, and nothing is lost", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    for (const name of ["one", "two", "three"]) {
      expect((await t.json("POST", DOCS, { key, body: { name, content: 1 } })).status).toBe(201);
      // a transaction that writes nothing here takes an id between the writes' own, as other work on a
      // server does: without it, two writes in a row may hold consecutive ids and leave none between them
      await t.testDb.database.sql`select pg_current_xact_id()`;
    }
    const rows = await t.testDb.database.sql`select tx::text, seq::text from events where account_id = ${accountId} order by tx, seq`;
    const names = async (after: string) => (await readAll(key, "", after)).events.map((event) => event.data.document.name);
    expect(await names(`${rows[0]!.tx}-${rows[0]!.seq}`)).toEqual(["two", "three"]);
    expect(await names(`${rows[2]!.tx}-${rows[2]!.seq}`)).toEqual([]);
    // with nothing after it, the page hands the old cursor back as it was
    const idle = await t.json("GET", `${EVENTS}?after=${rows[2]!.tx}-${rows[2]!.seq}`, { key });
    expect(idle.body.nextCursor).toBe(`${rows[2]!.tx}-${rows[2]!.seq}`);
    // a transaction id between two commits (one that wrote nothing here): resumes after the older one
    expect(await names(`${BigInt(rows[1]!.tx) - 1n}-0`)).toEqual(rows[1]!.tx === rows[0]!.tx ? ["three"] : ["two", "three"]);
    expect(await names("0-0")).toEqual(["one", "two", "three"]);
    // the cursors it hands out now are of the new form, and resume the same way
    const first = await t.json("GET", `${EVENTS}?limit=1`, { key });
    expect(first.body.events[0].cursor).toMatch(/^[0-9]+\.[0-9]+$/);
  });
});

describe("retention", () => {
  test("the sweep removes events older than the cutoff and keeps the rest", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    await t.json("POST", DOCS, { key, body: { name: "old", content: 1 } });
    await t.json("POST", DOCS, { key, body: { name: "new", content: 1 } });
    const { sql } = t.testDb.database;
    // 1970 for "old" and every event written before it: older than the cutoff, as the oldest events are
    const [{ old }] = await sql`select seq as old from events where account_id = ${accountId} and document_name = 'old'`;
    const [{ expired }] =
      await sql`with changed as (update events set created_at = 1000 where seq <= ${old} returning 1) select count(*)::int as expired from changed`;
    expect(await sweepExpiredEvents(t.testDb.database.db, 2000, 3)).toBe(expired);
    expect(await sweepExpiredEvents(t.testDb.database.db, 2000, 3)).toBe(0);
    expect((await readAll(key)).events.map((event) => event.data.document.name)).toEqual(["new"]);
  });
});
