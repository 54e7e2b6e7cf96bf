/**
 * GET /api/v1/events/stream through real listeners (Bun.serve and the node listener, in this process, so
 * the test can read the streams' count), over the app of createTestApp with 100 ms heartbeats.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import postgres from "postgres";
import { type EventFilter, FEED_START, readEvents } from "../../../src/modules/events/service";
import { EventStreams, eventStreamsOf, type FeedReader } from "../../../src/modules/events/stream";
import { listen } from "../../../src/server/listener";
import type { Listener } from "../../../src/server/transport";
import { ADMIN_KEY, createTestApp, type TestApp } from "../../support/app";
import { startServerOnTestDatabase } from "../../support/server";
import { framesOf, SseReader } from "./sse";

const HEARTBEAT_MS = 100;
const METRICS_TOKEN = "stream-test-metrics-token";
let t: TestApp;
let hub: EventStreams;
const listeners: Record<"bun" | "node", Listener> = {} as never;

beforeAll(async () => {
  t = await createTestApp({ EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS), METRICS_TOKEN });
  hub = eventStreamsOf(t.testDb.database);
  for (const kind of ["bun", "node"] as const) {
    listeners[kind] = await listen({ kind, port: 0, hostname: "127.0.0.1" }, (request) => t.app.handle(request));
  }
});
afterAll(async () => {
  for (const listener of Object.values(listeners)) await listener.stop(true);
  await t.close();
});

const DOCS = "/api/v1/documents";
const STREAM = "/api/v1/events/stream";

interface Opened {
  response: Response;
  reader: SseReader;
  close(): void;
}

async function open(key: string, query = "", headers: Record<string, string> = {}, via: "bun" | "node" = "bun"): Promise<Opened> {
  const aborter = new AbortController();
  const response = await fetch(new URL(`${STREAM}${query}`, listeners[via].url), {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: aborter.signal,
  });
  expect(response.status).toBe(200);
  return { response, reader: new SseReader(response.body!), close: () => aborter.abort() };
}

async function create(key: string, name: string, folder?: string): Promise<string> {
  const created = await t.json("POST", DOCS, { key, body: { name, content: { name }, ...(folder ? { folder } : {}) } });
  expect(created.status).toBe(201);
  return created.body.document.id;
}

const names = (reader: SseReader) => reader.events.map((event) => event.data.document?.name ?? event.data.pipeline?.name);
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

/** `count` document.created events named n1, n2, … written at once, straight into the feed (no NOTIFY: the recheck finds them). */
async function insertEvents(accountId: string, count: number, padding = 0, prefix = "n"): Promise<void> {
  await t.testDb.database.sql`
    insert into events (id, account_id, type, folder, data, created_at)
    select 'evt_' || gen_random_uuid(), ${accountId}, 'document.created', null,
           jsonb_build_object('document', jsonb_build_object('id', 'doc_' || g, 'name', ${prefix} || g, 'title', ${prefix} || g,
             'description', repeat('x', ${padding}), 'tags', '[]'::jsonb, 'folder', null, 'fileSize', 2, 'version', 1,
             'createdAt', 1, 'updatedAt', 1)), 1
    from generate_series(1, ${count}) g`;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

async function streamsBackTo(count: number, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (hub.stats().open !== count && Date.now() < deadline) await Bun.sleep(10);
  expect(hub.stats().open).toBe(count);
}

describe("live delivery", () => {
  for (const via of ["bun", "node"] as const) {
    test(`events arrive within a bound after each write, in order, as id/event/data frames (${via} listener)`, async () => {
      const { key } = await t.newAccount({ permissions: ["documents"] });
      const stream = await open(key, "", {}, via);
      await stream.reader.until((reader) => reader.frames.length > 0);
      expect(stream.reader.frames[0]).toMatchObject({ retry: 2000 });
      expect(stream.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(stream.response.headers.get("cache-control")).toBe("no-cache");
      const sinceWrite: number[] = [];
      const sinceAck: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        const id = await create(key, `live-${i}`);
        const acknowledged = performance.now();
        await stream.reader.until((reader) => reader.events.some((event) => event.data.document.id === id), 3000);
        const frame = stream.reader.frames.find((candidate) => candidate.data?.includes(id))!;
        sinceWrite.push(frame.at - started);
        sinceAck.push(Math.max(0, frame.at - acknowledged));
      }
      const frames = stream.reader.frames.filter((frame) => frame.data !== undefined);
      for (const frame of frames) {
        const event = JSON.parse(frame.data!);
        expect(frame.id).toBe(event.cursor);
        expect(frame.event).toBe(event.type);
      }
      expect(names(stream.reader)).toEqual(Array.from({ length: 20 }, (_, i) => `live-${i}`));
      console.log(
        `write → stream (${via}): median ${percentile(sinceWrite, 0.5).toFixed(1)} ms, max ${Math.max(...sinceWrite).toFixed(1)} ms; after the 201: median ${percentile(sinceAck, 0.5).toFixed(1)} ms, max ${Math.max(...sinceAck).toFixed(1)} ms`,
      );
      expect(percentile(sinceAck, 0.5)).toBeLessThan(250);
      expect(Math.max(...sinceAck)).toBeLessThan(1500);
      stream.close();
      await streamsBackTo(0);
    });
  }

  test("heartbeats: `retry:` once first, then `: heartbeat` every EVENTS_HEARTBEAT_MS while nothing happens, with no event", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const stream = await open(key);
    await stream.reader.until((reader) => reader.heartbeats >= 5, 3000);
    const frames = stream.reader.frames;
    expect(frames.filter((frame) => frame.retry !== undefined)).toHaveLength(1);
    expect(frames[0].retry).toBe(2000);
    expect(stream.reader.events).toEqual([]);
    const gaps = frames
      .filter((frame) => frame.comment === " heartbeat")
      .slice(1)
      .map((frame, i) => frame.at - frames.filter((f) => f.comment === " heartbeat")[i].at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(HEARTBEAT_MS - 15);
    expect(Math.max(...gaps)).toBeLessThan(HEARTBEAT_MS * 5);
    stream.close();
    await streamsBackTo(0);
  });

  test("an event no request announced arrives by the recheck, and a transaction left open holds nothing back", async () => {
    // heartbeats (and the read after each) a minute apart, so only a notification or the once-a-second recheck can deliver
    const quiet = await createTestApp({ EVENTS_HEARTBEAT_MS: "60000" });
    try {
      const { key } = await quiet.newAccount({ permissions: ["documents"] });
      const aborter = new AbortController();
      const response = await quiet.app.handle(
        new Request(`http://localhost${STREAM}`, { headers: { authorization: `Bearer ${key}` }, signal: aborter.signal }),
      );
      const reader = new SseReader(response.body!);
      await reader.until((r) => r.frames.length > 0);
      const sql = postgres(quiet.testDb.url, { max: 1, onnotice: () => {} });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      // an older transaction with a transaction id, left open: the feed no longer waits for it
      const older = sql.begin(async (tx) => {
        await tx`select pg_current_xact_id()`;
        holding();
        await released;
      });
      await held;
      const created = await quiet.json("POST", DOCS, { key, body: { name: "while another is open", content: 1 } });
      expect(created.status).toBe(201);
      await reader.until((r) => r.events.length === 1, 3000);
      // a change straight in the database (as the purge sweep makes them): no notification, the recheck finds it
      const { sql: direct } = quiet.testDb.database;
      const started = performance.now();
      await direct`update documents set name = 'unannounced' where id = ${created.body.document.id}`;
      await reader.until((r) => r.events.length === 2, 3000);
      const waited = reader.frames.at(-1)!.at - started;
      console.log(`unannounced event: streamed ${waited.toFixed(0)} ms after its commit (recheck every 1 s)`);
      expect(waited).toBeLessThan(2000);
      expect(reader.events.map((event) => event.data.document.name)).toEqual(["while another is open", "unannounced"]);
      release();
      await older;
      await sql.end();
      aborter.abort();
      await reader.finished(2000);
      expect(eventStreamsOf(quiet.testDb.database).stats().open).toBe(0);
    } finally {
      await quiet.close();
    }
  });
});

describe("resuming", () => {
  test("Last-Event-ID resumes after the last event received: exactly the missed events, none twice, none lost", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const first = await open(key);
    for (let i = 0; i < 3; i++) await create(key, `before-${i}`);
    await first.reader.until((reader) => reader.events.length === 3);
    first.close();
    await streamsBackTo(0);
    for (let i = 0; i < 4; i++) await create(key, `missed-${i}`);
    const second = await open(key, "", { "Last-Event-ID": first.reader.lastEventId! });
    await create(key, "after");
    await second.reader.until((reader) => reader.events.length === 5);
    await Bun.sleep(300); // nothing more comes
    expect(names(second.reader)).toEqual(["missed-0", "missed-1", "missed-2", "missed-3", "after"]);
    // `after` in the query does the same; Last-Event-ID wins over it (an EventSource keeps its URL and sends the header)
    const byQuery = await open(key, `?after=${first.reader.events[1].cursor}`, { "Last-Event-ID": first.reader.lastEventId! });
    await byQuery.reader.until((reader) => reader.events.length === 5);
    expect(names(byQuery.reader)).toEqual(names(second.reader));
    const queryOnly = await open(key, `?after=${first.reader.events[1].cursor}`);
    await queryOnly.reader.until((reader) => reader.events.length === 6);
    expect(names(queryOnly.reader)[0]).toBe("before-2");
    for (const stream of [second, byQuery, queryOnly]) stream.close();
    await streamsBackTo(0);
  });

  test("a client too slow to take anything holds the server to a bounded read, is cut, and resumes with nothing lost", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const total = 20_000;
    // 20,000 events of ~1 KB written at once (24 MB of frames), far more than the sockets buffer
    await insertEvents(accountId, total, 1000);
    const pagesBefore = hub.stats().pagesRead;
    const socket = net.connect(listeners.bun.url.port as unknown as number, "127.0.0.1");
    socket.pause(); // reads nothing
    socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    await streamsBackTo(1);
    // the server stops reading once the client stops taking; two heartbeat intervals later (at the next recheck) it cuts it
    await streamsBackTo(0, 4000);
    const pagesRead = hub.stats().pagesRead - pagesBefore;
    console.log(`slow client: the stream read ${pagesRead} of ${total / 100} pages before it was cut`);
    expect(pagesRead).toBeLessThan(total / 100 / 2);
    // the client now reads what reached it: whole frames, then the cut
    socket.resume();
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    await new Promise((resolve) => socket.once("close", resolve));
    const body = received.slice(received.indexOf("\r\n\r\n") + 4);
    const seen = framesOf(dechunk(body))
      .filter((frame) => frame.data !== undefined)
      .map((frame) => JSON.parse(frame.data!));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(total);
    const resumed = await open(key, "", { "Last-Event-ID": seen.at(-1).cursor });
    await resumed.reader.until((reader) => reader.events.length === total - seen.length, 30_000);
    const all = [...seen, ...resumed.reader.events].map((event) => event.data.document.name);
    expect(all).toEqual(Array.from({ length: total }, (_, i) => `n${i + 1}`));
    resumed.close();
    await streamsBackTo(0);
  }, 60_000);
});

/** The payload of an HTTP/1.1 chunked body (complete chunks only). */
function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const line = rest.indexOf("\r\n");
    if (line === -1) return out;
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0) || rest.length < line + 2 + size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

describe("filters and permissions", () => {
  test("type and folder filter the stream as they filter the list", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const byType = await open(key, "?type=document.deleted");
    const byFolder = await open(key, "?folder=/a/");
    const exact = await open(key, "?folder=a&recursive=false");
    const a = await create(key, "in a", "a");
    await create(key, "in a/b", "a/b");
    await create(key, "in ab", "ab");
    expect((await t.request("DELETE", `${DOCS}/${a}`, { key })).status).toBe(200);
    await byType.reader.until((reader) => reader.events.length === 1);
    await byFolder.reader.until((reader) => reader.events.length === 3);
    await exact.reader.until((reader) => reader.events.length === 2);
    await Bun.sleep(300);
    expect(exact.reader.events.map((event) => `${event.type} ${event.data.document.folder}`)).toEqual([
      "document.created a",
      "document.deleted a",
    ]);
    exact.close();
    expect(byType.reader.events.map((event) => event.type)).toEqual(["document.deleted"]);
    expect(byFolder.reader.events.map((event) => `${event.type} ${event.data.document.folder}`)).toEqual([
      "document.created a",
      "document.created a/b",
      "document.deleted a",
    ]);
    byType.close();
    byFolder.close();
    await streamsBackTo(0);
  });

  test("a key sees only the families its permissions cover", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const utilitiesOnly = await t.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["utilities"] } });
    const documentsOnly = await t.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
    const pipelines = await open(utilitiesOnly.body.key);
    const documents = await open(documentsOnly.body.key);
    const both = await open(key);
    await create(key, "doc");
    const pipeline = await t.json("POST", "/api/v1/pipelines", { key, body: { name: "pipe", steps: [{ utility: "schema.clean-json" }] } });
    expect(pipeline.status).toBe(201);
    await both.reader.until((reader) => reader.events.length === 2);
    await pipelines.reader.until((reader) => reader.events.length === 1);
    await documents.reader.until((reader) => reader.events.length === 1);
    await Bun.sleep(300);
    expect(names(both.reader)).toEqual(["doc", "pipe"]);
    expect(pipelines.reader.events.map((event) => event.type)).toEqual(["pipeline.created"]);
    expect(documents.reader.events.map((event) => event.type)).toEqual(["document.created"]);
    for (const stream of [pipelines, documents, both]) stream.close();
    await streamsBackTo(0);
  });

  test("a key revoked while its stream is open ends the stream within the recheck; reconnecting is 401", async () => {
    const { accountId } = await t.newAccount({ permissions: ["documents"] });
    const made = await t.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
    const stream = await open(made.body.key);
    await stream.reader.until((reader) => reader.frames.length > 0);
    const revoked = performance.now();
    expect((await t.request("DELETE", `/api/v1/admin/keys/${made.body.apiKey.id}`, { key: ADMIN_KEY })).status).toBe(200);
    await stream.reader.finished(3000);
    console.log(`revoked key: its stream ended ${(performance.now() - revoked).toFixed(0)} ms after the revocation`);
    await Bun.sleep(600); // the key cache (500 ms)
    const again = await fetch(new URL(STREAM, listeners.bun.url), { headers: { authorization: `Bearer ${made.body.key}` } });
    expect(again.status).toBe(401);
    await streamsBackTo(0);
  });

  test("bad parameters are 400s naming them, before any stream opens; no key is 401", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    for (const [query, headers, path] of [
      ["?after=nope", {}, "/after"],
      ["", { "Last-Event-ID": "nope" }, "/Last-Event-ID"],
      ["?type=document.exploded", {}, "/type"],
      ["?folder=a/../b", {}, "/folder"],
      ["?folder=a&recursive=no", {}, "/recursive"],
      ["?timeout=0", {}, "/timeout"],
      ["?timeout=1.5", {}, "/timeout"],
      ["?timeout=100000", {}, "/timeout"],
    ] as const) {
      const answer = await t.json("GET", `${STREAM}${query}`, { key, headers });
      expect(answer.status).toBe(400);
      expect(answer.headers.get("content-type")).toStartWith("application/problem+json");
      expect(answer.body.errors[0].path).toBe(path);
    }
    expect((await t.request("GET", STREAM, { key: null })).status).toBe(401);
    expect(hub.stats().open).toBe(0);
  });
});

describe("ending", () => {
  test("a client that goes away frees its stream at once: no stream, timer or reader left (both listeners)", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const streams = await Promise.all(
      Array.from({ length: 6 }, (_, i) => open(key, i % 3 === 0 ? "" : "?type=document.*", {}, i % 2 === 0 ? "bun" : "node")),
    );
    await Promise.all(streams.map((stream) => stream.reader.until((reader) => reader.frames.length > 0)));
    expect(hub.stats()).toMatchObject({ open: 6, ticking: true, listening: true });
    for (const stream of streams) stream.close();
    await streamsBackTo(0, 2000);
    expect(hub.stats().ticking).toBe(false);
    const pagesBefore = hub.stats().pagesRead;
    await create(key, "nobody listens");
    await Bun.sleep(HEARTBEAT_MS * 3);
    expect(hub.stats().pagesRead).toBe(pagesBefore); // nothing reads any more
  });

  test("HEAD answers the stream's headers at once and opens no stream (both listeners)", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    for (const via of ["bun", "node"] as const) {
      const head = await fetch(new URL(STREAM, listeners[via].url), {
        method: "HEAD",
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(3000),
      });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(head.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/); // once: not merged twice by Elysia's stream path
      expect(await head.text()).toBe("");
    }
    expect(hub.stats().open).toBe(0);
  });

  test("?timeout=1 ends the stream after a second; in process (app.handle) too", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const started = performance.now();
    const stream = await open(key, "?timeout=1");
    await stream.reader.finished(3000);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(2500);
    expect(stream.reader.error).toBeUndefined();
    const inProcess = await t.request("GET", `${STREAM}?timeout=1`, { key });
    expect(inProcess.status).toBe(200);
    expect(await inProcess.text()).toStartWith("retry: 2000\n\n");
    await streamsBackTo(0);
  });
});

test("SIGTERM ends the open streams at once, so draining does not wait DRAIN_TIMEOUT_MS for them", async () => {
  const key = "kiln_StreamDrainKey0123456789abcdefABCDEF";
  const server = await startServerOnTestDatabase(key, { EVENTS_HEARTBEAT_MS: "200", DRAIN_TIMEOUT_MS: "20000" });
  try {
    const response = await fetch(`${server.url}${STREAM}`, { headers: { authorization: `Bearer ${key}` } });
    const reader = new SseReader(response.body!);
    await fetch(`${server.url}${DOCS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x", content: 1 }),
    });
    await reader.until((r) => r.events.length === 1);
    const signalled = performance.now();
    const exited = server.stop("SIGTERM");
    await reader.finished(5000);
    const streamEnded = performance.now() - signalled;
    expect(await exited).toBe(0);
    const exitedAfter = performance.now() - signalled;
    console.log(`SIGTERM: stream ended after ${streamEnded.toFixed(0)} ms, process exited after ${exitedAfter.toFixed(0)} ms`);
    expect(reader.error).toBeUndefined(); // ended cleanly, not cut
    expect(exitedAfter).toBeLessThan(10_000);
  } finally {
    await server.close();
  }
});

/** A metric's value from GET /metrics (the sum over its series whose labels contain `labels`). */
async function metric(name: string, labels = ""): Promise<number> {
  const text = await (await t.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(name) && line.includes(labels) && !line.startsWith(`${name}_`))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

describe("one read of the feed per change for all the streams of an account", () => {
  test("20 streams of one account (their own filters and families) share one read per change; each gets exactly its events", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const made = await t.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
    const queries = ["", "?type=document.created", "?folder=f", "?type=pipeline.*"];
    const specs = Array.from({ length: 20 }, (_, i) => ({ query: queries[i % 4], documentsOnly: i % 5 === 4 }));
    const streams = await Promise.all(
      specs.map((spec, i) => open(spec.documentsOnly ? made.body.key : key, spec.query, {}, i % 2 === 0 ? "bun" : "node")),
    );
    await waitFor(() => hub.stats().joined === 20, "20 joined streams");
    expect(await metric("kiln_event_streams_open")).toBe(20);
    const before = hub.stats();
    const sharedMetricBefore = await metric("kiln_event_feed_reads_total", 'reader="shared"');
    const expected = (spec: (typeof specs)[number], name: string, folder: string | null, type: string) =>
      (spec.query === "" && (type.startsWith("document.") || !spec.documentsOnly)) ||
      (spec.query === "?type=document.created" && type === "document.created") ||
      (spec.query === "?folder=f" && folder === "f") ||
      (spec.query === "?type=pipeline.*" && type === "pipeline.created" && !spec.documentsOnly && name !== "");
    const written: { name: string; folder: string | null; type: string }[] = [];
    const writes = 6;
    for (let i = 0; i < writes; i++) {
      const folder = i % 2 === 1 ? "f" : null;
      await create(key, `shared-${i}`, folder ?? undefined);
      written.push({ name: `shared-${i}`, folder, type: "document.created" });
      await Promise.all(
        streams.map((stream, s) =>
          stream.reader.until(
            (reader) => reader.events.length === written.filter((w) => expected(specs[s], w.name, w.folder, w.type)).length,
          ),
        ),
      );
    }
    const pipeline = await t.json("POST", "/api/v1/pipelines", { key, body: { name: "pipe", steps: [{ utility: "schema.clean-json" }] } });
    expect(pipeline.status).toBe(201);
    written.push({ name: "pipe", folder: null, type: "pipeline.created" });
    const wanted = specs.map((spec) => written.filter((w) => expected(spec, w.name, w.folder, w.type)).map((w) => w.name));
    await Promise.all(streams.map((stream, s) => stream.reader.until((reader) => reader.events.length === wanted[s].length)));
    await Bun.sleep(300); // nothing more comes
    for (const [s, stream] of streams.entries()) expect(names(stream.reader)).toEqual(wanted[s]);
    const after = hub.stats();
    const shared = after.sharedReads - before.sharedReads;
    console.log(
      `20 streams of one account, ${writes + 1} writes: ${shared} shared reads, ${after.pagesRead - before.pagesRead - shared} reads of their own`,
    );
    // one read per notification, and one more per recheck that finds the account's new events: never one per stream
    expect(shared).toBeGreaterThanOrEqual(writes + 1);
    expect(shared).toBeLessThanOrEqual(2 * (writes + 1));
    expect(after.pagesRead - before.pagesRead).toBe(shared);
    expect((await metric("kiln_event_feed_reads_total", 'reader="shared"')) - sharedMetricBefore).toBe(shared);
    for (const stream of streams) stream.close();
    await streamsBackTo(0);
    expect(await metric("kiln_event_streams_open")).toBe(0);
  });

  test("streams that start behind catch up with reads of their own, then join the shared read: no gap, no repeat, while writes go on", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    await insertEvents(accountId, 250, 0, "old-");
    const listed = await t.json("GET", "/api/v1/events?limit=500", { key });
    const old = listed.body.events as { cursor: string }[];
    expect(old).toHaveLength(250);
    const live = await open(key);
    await live.reader.until((reader) => reader.events.length === 250);
    const writer = (async () => {
      for (let i = 0; i < 40; i++) await create(key, `new-${i}`);
    })();
    const late: { from: number; stream: Opened }[] = [];
    for (const from of [0, 30, 120, 249]) {
      await Bun.sleep(25);
      late.push({ from, stream: await open(key, "", from === 0 ? {} : { "Last-Event-ID": old[from - 1].cursor }) });
    }
    await writer;
    const all = [...Array.from({ length: 250 }, (_, i) => `old-${i + 1}`), ...Array.from({ length: 40 }, (_, i) => `new-${i}`)];
    for (const { from, stream } of [{ from: 0, stream: live }, ...late]) {
      await stream.reader.until((reader) => reader.events.length === all.length - from, 10_000);
    }
    await Bun.sleep(300);
    for (const { from, stream } of [{ from: 0, stream: live }, ...late]) expect(names(stream.reader)).toEqual(all.slice(from));
    expect(hub.stats()).toMatchObject({ open: 5, joined: 5 });
    for (const { stream } of [{ stream: live }, ...late]) stream.close();
    await streamsBackTo(0);
  });

  test("a stream joins with what the shared read handed out during its last read of its own, and drops what that read already had", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const [{ id: keyId }] = await t.testDb.database.sql`select id from api_keys where account_id = ${accountId}`;
    // hooks around the reads: `beforeOwn`/`afterOwn` run once around the next read of a stream of its own
    // (the type-filtered ones here), `sharedGate` holds the shared reads back
    let beforeOwn: (() => Promise<unknown>) | undefined;
    let afterOwn: (() => Promise<unknown>) | undefined;
    let sharedGate: Promise<void> | undefined;
    const reader: FeedReader = async (account, families, filter, after, limit) => {
      const own = filter.types !== undefined;
      const [before, afterwards] = own ? [beforeOwn, afterOwn] : [];
      if (own) beforeOwn = afterOwn = undefined;
      else await sharedGate;
      await before?.();
      const page = await readEvents(t.testDb.database.db, account, families, filter, after, limit);
      await afterwards?.();
      return page;
    };
    const streams = new EventStreams(t.testDb.database, { heartbeatMs: HEARTBEAT_MS, reader });
    const aborter = new AbortController();
    const openHere = (filter: EventFilter) =>
      new SseReader(streams.open({ accountId, keyId, families: ["document"], filter, after: FEED_START, signal: aborter.signal }));
    const e = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `e${from + i}`);
    const ownReads = () => streams.stats().pagesRead - streams.stats().sharedReads;
    try {
      for (let i = 0; i < 3; i++) await create(key, `e${i}`);
      const first = openHere({});
      await first.until((r) => r.events.length === 3);
      await waitFor(() => streams.stats().joined === 1, "the first stream joined");

      // three events handed out by the shared read while the second stream's own read was on its way back
      afterOwn = async () => {
        for (let i = 3; i < 6; i++) await create(key, `e${i}`);
        await first.until((r) => r.events.length === 6);
      };
      const ownBefore = ownReads();
      const second = openHere({ types: ["document.created"] });
      await second.until((r) => r.events.length === 6);
      await waitFor(() => streams.stats().joined === 2, "the second stream joined");
      expect(ownReads() - ownBefore).toBe(1); // joined after its one read, with the three events, without reading them
      expect(second.events.map((event) => event.data.document.name)).toEqual(e(0, 6));

      // an event the third stream's own read already has, handed out by the shared read only after it joined
      let release!: () => void;
      sharedGate = new Promise((resolve) => (release = resolve));
      beforeOwn = () => create(key, "e6");
      const third = openHere({ types: ["document.*"] });
      await third.until((r) => r.events.length === 7);
      await waitFor(() => streams.stats().joined === 3, "the third stream joined");
      release();
      sharedGate = undefined;
      await first.until((r) => r.events.length === 7);
      await second.until((r) => r.events.length === 7);
      await create(key, "e7");
      for (const stream of [first, second, third]) await stream.until((r) => r.events.length === 8);
      await Bun.sleep(300);
      for (const stream of [first, second, third]) expect(stream.events.map((event) => event.data.document.name)).toEqual(e(0, 8));
    } finally {
      aborter.abort();
      await streams.close();
    }
    expect(streams.stats().open).toBe(0);
  });

  test("a client that takes nothing leaves the shared read and is cut, while the account's other stream gets every event", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const fast = await open(key);
    const socket = net.connect(listeners.bun.url.port as unknown as number, "127.0.0.1");
    socket.pause(); // reads nothing
    socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    await waitFor(() => hub.stats().joined === 2, "both streams joined");
    const total = 5000;
    await insertEvents(accountId, total, 1000); // 6 MB of frames, more than the stalled socket buffers
    await fast.reader.until((reader) => reader.events.length === total, 20_000);
    expect(names(fast.reader)).toEqual(Array.from({ length: total }, (_, i) => `n${i + 1}`));
    await streamsBackTo(1, 4000); // the stalled one, cut
    expect(hub.stats().joined).toBe(1);
    socket.destroy();
    fast.close();
    await streamsBackTo(0);
  }, 30_000);
});

describe("limits on open streams", () => {
  let limited: TestApp;
  let listener: Listener;
  beforeAll(async () => {
    limited = await createTestApp({
      EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      EVENT_STREAMS_PER_KEY: "2",
      EVENT_STREAMS_PER_ACCOUNT: "3",
      EVENT_STREAMS_PER_PROCESS: "5",
    });
    listener = await listen({ kind: "bun", port: 0, hostname: "127.0.0.1" }, (request) => limited.app.handle(request));
  });
  afterAll(async () => {
    await listener.stop(true);
    await limited.close();
  });

  const openLimited = async (key: string) => {
    const aborter = new AbortController();
    const response = await fetch(new URL(STREAM, listener.url), { headers: { authorization: `Bearer ${key}` }, signal: aborter.signal });
    if (response.status !== 200) return { response, body: (await response.json()) as any, close: () => {} };
    const reader = new SseReader(response.body!);
    await reader.until((r) => r.frames.length > 0);
    return { response, body: undefined as any, reader, close: () => aborter.abort() };
  };
  const openCount = () => eventStreamsOf(limited.testDb.database).stats().open;
  const refusedWith = (opened: Awaited<ReturnType<typeof openLimited>>, status: number, variable: string) => {
    expect(opened.response.status).toBe(status);
    expect(opened.response.headers.get("content-type")).toStartWith("application/problem+json");
    expect(opened.response.headers.get("retry-after")).toBe("1"); // two 100 ms heartbeats, rounded up to a second
    expect(opened.body).toMatchObject({ code: "too_many_streams", status });
    expect(opened.body.detail).toContain(variable);
  };

  test("past EVENT_STREAMS_PER_KEY and EVENT_STREAMS_PER_ACCOUNT: 429 naming the limit, with Retry-After; past EVENT_STREAMS_PER_PROCESS: 503", async () => {
    const a = await limited.newAccount({ permissions: ["documents"] });
    const a2 = await limited.json("POST", "/api/v1/admin/keys", {
      key: ADMIN_KEY,
      body: { accountId: a.accountId, permissions: ["documents"] },
    });
    const held = [await openLimited(a.key), await openLimited(a.key)];
    refusedWith(await openLimited(a.key), 429, "EVENT_STREAMS_PER_KEY");
    held.push(await openLimited(a2.body.key));
    expect(held.map((opened) => opened.response.status)).toEqual([200, 200, 200]);
    refusedWith(await openLimited(a2.body.key), 429, "EVENT_STREAMS_PER_ACCOUNT");
    // HEAD opens nothing, so it is answered even at the limit
    expect((await fetch(new URL(STREAM, listener.url), { method: "HEAD", headers: { authorization: `Bearer ${a.key}` } })).status).toBe(
      200,
    );
    const b = await limited.newAccount({ permissions: ["documents"] });
    const c = await limited.newAccount({ permissions: ["documents"] });
    held.push(await openLimited(b.key), await openLimited(b.key));
    expect(openCount()).toBe(5);
    refusedWith(await openLimited(c.key), 503, "EVENT_STREAMS_PER_PROCESS");
    for (const opened of held) opened.close();
    await waitFor(() => openCount() === 0, "every stream closed");
  });

  test("a slot is free again as soon as its stream ends: the client closed it, dropped the connection, or its key was revoked", async () => {
    const { accountId, key } = await limited.newAccount({ permissions: ["documents"] });
    const second = await limited.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
    const first = [await openLimited(key), await openLimited(key)];
    expect((await openLimited(key)).response.status).toBe(429);
    // closed by the client
    first[0].close();
    await waitFor(() => openCount() === 1, "the closed stream's slot freed");
    first[0] = await openLimited(key);
    expect(first[0].response.status).toBe(200);
    // dropped without a word: the socket is destroyed
    const socket = net.connect(listener.url.port as unknown as number, "127.0.0.1");
    socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${second.body.key}\r\n\r\n`);
    await waitFor(() => openCount() === 3, "the raw stream open");
    expect((await openLimited(second.body.key)).response.status).toBe(429); // the account's 3
    socket.destroy();
    await waitFor(() => openCount() === 2, "the dropped stream's slot freed");
    // revoked: its streams end within the recheck, and their slots with them
    const revocable = await openLimited(second.body.key);
    expect(revocable.response.status).toBe(200);
    expect((await limited.request("DELETE", `/api/v1/admin/keys/${second.body.apiKey.id}`, { key: ADMIN_KEY })).status).toBe(200);
    await revocable.reader!.finished(3000);
    await waitFor(() => openCount() === 2, "the revoked key's slot freed");
    const third = await limited.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
    const again = await openLimited(third.body.key);
    expect(again.response.status).toBe(200);
    for (const opened of [...first, again]) opened.close();
    await waitFor(() => openCount() === 0, "every stream closed");
  });
});
