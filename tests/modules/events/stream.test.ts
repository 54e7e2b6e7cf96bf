/**
 * GET /api/v1/events/stream through real listeners (Bun.serve and the node listener, in this process, so
 * the test can read the streams' count), over the app of createTestApp with 100 ms heartbeats.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import postgres from "postgres";
import { createTestApp, ADMIN_KEY, type TestApp } from "../../support/app";
import { startServerOnTestDatabase } from "../../support/server";
import { listen } from "../../../src/server/listener";
import type { Listener } from "../../../src/server/transport";
import { eventStreamsOf, type EventStreams } from "../../../src/modules/events/stream";
import { framesOf, SseReader } from "./sse";

const HEARTBEAT_MS = 100;
let t: TestApp;
let hub: EventStreams;
const listeners: Record<"bun" | "node", Listener> = {} as never;

beforeAll(async () => {
  t = await createTestApp({ EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS) });
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
    await t.testDb.database.sql`
      insert into events (id, account_id, type, folder, data, created_at)
      select 'evt_' || gen_random_uuid(), ${accountId}, 'document.created', null,
             jsonb_build_object('document', jsonb_build_object('id', 'doc_' || g, 'name', 'n' || g, 'pad', repeat('x', 1000))), 1
      from generate_series(1, ${total}) g`;
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
    const a = await create(key, "in a", "a");
    await create(key, "in a/b", "a/b");
    await create(key, "in ab", "ab");
    expect((await t.request("DELETE", `${DOCS}/${a}`, { key })).status).toBe(200);
    await byType.reader.until((reader) => reader.events.length === 1);
    await byFolder.reader.until((reader) => reader.events.length === 3);
    await Bun.sleep(300);
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
