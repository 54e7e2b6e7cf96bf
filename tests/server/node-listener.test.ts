/**
 * HTTP_LISTENER=node on the real server: `Expect: 100-continue` answered with `100 Continue` only once
 * the key, permission, rate limit and declared size are accepted (raw socket bytes), and the answers
 * that Bun.serve shapes itself (Content-Length, HEAD, 304, ranges, streamed and compressed bodies) the
 * same through node:http. The default listener's behaviour: http-details.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { type ServerOnTestDatabase, startServerOnTestDatabase } from "../support/server";

setDefaultTimeout(60_000);

const KEY = "kiln_NodeListenerTestKey0123456789abcdefAB";
let server: ServerOnTestDatabase;
let host: string;

beforeAll(async () => {
  server = await startServerOnTestDatabase(KEY, { UTILITY_MAX_PAYLOAD_BYTES: "1000000", HTTP_LISTENER: "node" });
  host = new URL(server.url).host;
}, 90_000);
afterAll(async () => {
  await server?.close();
}, 60_000);

async function api(method: string, path: string, body?: unknown, key = KEY): Promise<any> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return response.json();
}

/** A key of a fresh account with these permissions and rate limit. */
async function newKey(permissions: string[], rateLimitPerMinute: number | null = null): Promise<string> {
  const { account } = await api("POST", "/api/v1/admin/accounts", { name: "node-listener", rateLimitPerMinute });
  return (await api("POST", "/api/v1/admin/keys", { accountId: account.id, permissions })).key;
}

/** A raw connection: what is written and what comes back, byte for byte. */
interface Connection {
  write(data: string | Uint8Array): void;
  /** resolves once everything written went to the socket */
  flushed(): Promise<void>;
  /** everything received so far */
  received(): string;
  closed(): boolean;
  /** resolves when `done(received)` holds or the server closed; rejects after `timeoutMs` */
  until(done: (received: string) => boolean, timeoutMs?: number): Promise<string>;
  end(): void;
}

async function connect(): Promise<Connection> {
  const [hostname, port] = host.split(":");
  let received = "";
  let closed = false;
  // what the socket did not take yet (it takes what fits and says how much)
  const queue: Uint8Array[] = [];
  const flush = () => {
    while (queue.length > 0 && !closed) {
      const written = socket.write(queue[0]);
      if (written >= queue[0].byteLength) queue.shift();
      else {
        queue[0] = queue[0].subarray(Math.max(0, written));
        return;
      }
    }
  };
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, chunk) {
        received += new TextDecoder().decode(chunk);
      },
      drain: () => flush(),
      close() {
        closed = true;
      },
      error() {
        closed = true;
      },
    },
  });
  return {
    write: (data) => {
      queue.push(typeof data === "string" ? new TextEncoder().encode(data) : data);
      flush();
    },
    flushed: async () => {
      while (queue.length > 0 && !closed) await Bun.sleep(5);
    },
    received: () => received,
    closed: () => closed,
    async until(done, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(received) && !closed) {
        if (Date.now() > deadline) throw new Error(`no such answer within ${timeoutMs} ms; received: ${JSON.stringify(received)}`);
        await Bun.sleep(5);
      }
      return received;
    },
    end: () => socket.end(),
  };
}

const CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";

/** Whether `text` holds a final (non-1xx) answer, whole by its Content-Length. */
function finalAnswerIn(text: string): boolean {
  const final = text.split(CONTINUE).join("");
  const end = final.indexOf("\r\n\r\n");
  if (!final.startsWith("HTTP/1.1 ") || end === -1) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(final.slice(0, end))?.[1] ?? 0);
  return final.length >= end + 4 + length;
}

const head = (authorization: string, length: number, path = "/api/v1/documents", expectContinue = true) =>
  `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${expectContinue ? "Expect: 100-continue\r\n" : ""}\r\n`;

describe("Expect: 100-continue with HTTP_LISTENER=node", () => {
  /**
   * Sends the head of a request the server must refuse, waits for its answer, then sends as "body" a
   * whole request of its own: the connection must close without reading it.
   */
  async function refused(authorization: string, path: string, declared?: number): Promise<string> {
    const smuggled = `GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const connection = await connect();
    connection.write(head(authorization, declared ?? smuggled.length, path));
    const answer = await connection.until(finalAnswerIn);
    connection.write(smuggled);
    await connection.until(() => false, 3_000).catch(() => {});
    expect(connection.closed()).toBe(true);
    expect(connection.received()).toBe(answer); // nothing after the refusal: /health was never answered
    expect(answer).not.toContain("100 Continue");
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain("application/problem+json");
    return answer;
  }

  test("a bad key: 401 at once, no 100 Continue; a body sent anyway is never read as a request", async () => {
    const answer = await refused("Bearer kiln_wrong-key-000000000000000000000000", "/api/v1/documents");
    expect(answer).toStartWith("HTTP/1.1 401 ");
  });

  test("a missing permission: 403, no 100 Continue", async () => {
    const key = await newKey(["documents"]);
    const answer = await refused(`Bearer ${key}`, "/api/v1/utilities/schema.clean-json");
    expect(answer).toStartWith("HTTP/1.1 403 ");
  });

  test("a declared size over the utility limit: 413, no 100 Continue", async () => {
    const answer = await refused(`Bearer ${KEY}`, "/api/v1/utilities/schema.clean-json", 5_000_000);
    expect(answer).toStartWith("HTTP/1.1 413 ");
    expect(answer).toContain("payload_too_large");
  });

  test("beyond the rate limit: 429, no 100 Continue", async () => {
    const key = await newKey(["documents"], 1);
    await api("GET", "/api/v1/documents", undefined, key);
    const answer = await refused(`Bearer ${key}`, "/api/v1/documents");
    expect(answer).toStartWith("HTTP/1.1 429 ");
  });

  test("an accepted request: 100 Continue and nothing else until the body comes, then 201; the connection stays open", async () => {
    const body = JSON.stringify({ name: "continued", content: { a: 1 } });
    const connection = await connect();
    connection.write(head(`Bearer ${KEY}`, body.length));
    await connection.until((text) => text.startsWith(CONTINUE));
    await Bun.sleep(200);
    expect(connection.received()).toBe(CONTINUE);
    connection.write(body);
    const answer = await connection.until(finalAnswerIn);
    expect(answer).toStartWith(`${CONTINUE}HTTP/1.1 201 `);
    expect(answer).toContain('"name":"continued"');
    // kept alive: a second request on the same connection
    connection.write(`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const second = await connection.until((text) => text.split("HTTP/1.1 200 ").length === 2);
    expect(second).toContain('"status":"ok"');
    expect(connection.closed()).toBe(false);
    connection.end();
  });

  test("the expectation is matched in any case (RFC 9110): `Expect: 100-Continue` gets its 100 once accepted", async () => {
    const body = JSON.stringify({ name: "capitalised", content: 1 });
    const connection = await connect();
    connection.write(head(`Bearer ${KEY}`, body.length).replace("Expect: 100-continue", "Expect: 100-Continue"));
    await connection.until((text) => text.startsWith(CONTINUE));
    connection.write(body);
    expect(await connection.until(finalAnswerIn)).toStartWith(`${CONTINUE}HTTP/1.1 201 `);
    connection.end();
  });

  test("a chunked body refused part way (413 past the utility limit) is read to its end and dropped: the connection serves the next request", async () => {
    const connection = await connect();
    connection.write(
      `POST /api/v1/utilities/schema.clean-json HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = new TextEncoder().encode(" ".repeat(65_536));
    for (let sent = 0; sent < 1_500_000; sent += piece.byteLength)
      connection.write(new Uint8Array([...new TextEncoder().encode(`${piece.byteLength.toString(16)}\r\n`), ...piece, 13, 10]));
    connection.write("0\r\n\r\n");
    await connection.flushed();
    const refusal = await connection.until(finalAnswerIn);
    expect(refusal).toStartWith("HTTP/1.1 413 ");
    expect(refusal).toContain("payload_too_large");
    connection.write(`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const both = await connection.until(
      (text) => text.includes("HTTP/1.1 200 ") && finalAnswerIn(text.slice(text.indexOf("HTTP/1.1 200 "))),
    );
    expect(both.slice(both.indexOf("HTTP/1.1 200 "))).toContain('"status":"ok"');
    connection.end();
  });

  test("without Expect: the head and body at once get 201, no 100 Continue", async () => {
    const body = JSON.stringify({ name: "plain", content: [1, 2] });
    const connection = await connect();
    connection.write(head(`Bearer ${KEY}`, body.length, "/api/v1/documents", false) + body);
    const answer = await connection.until(finalAnswerIn);
    expect(answer).toStartWith("HTTP/1.1 201 ");
    expect(answer).not.toContain("100 Continue");
    connection.end();
  });
});

describe("answers through HTTP_LISTENER=node", () => {
  // 5 MB of JSON text, uploaded as raw content and stored byte for byte
  const content = new TextEncoder().encode(
    JSON.stringify(Array.from({ length: 80_000 }, (_, i) => ({ i, label: `row ${i} ${"x".repeat(40)}` }))),
  );
  let id: string;
  let etag: string;
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: RequestInit["body"]) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...headers },
      body,
      decompress: false,
    } as RequestInit);

  beforeAll(async () => {
    expect(content.byteLength).toBeGreaterThan(5_000_000);
    id = (await api("POST", "/api/v1/documents", { name: "big.json", content: [] })).document.id;
    const uploaded = await call("PUT", `/api/v1/documents/${id}/content`, { "content-type": "application/json" }, content);
    expect(uploaded.status).toBe(200);
    expect(await uploaded.json()).toEqual({ success: true, fileSize: content.byteLength });
    etag = uploaded.headers.get("etag")!;
  });

  test("a 5 MB upload comes back byte for byte, with Content-Length and the content ETag", async () => {
    const download = await call("GET", `/api/v1/documents/${id}/content`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-length")).toBe(String(content.byteLength));
    expect(download.headers.get("etag")).toBe(etag);
    expect(etag).toBe(`"${new Bun.CryptoHasher("sha256").update(content).digest("hex")}"`);
    expect(Buffer.from(await download.bytes()).equals(Buffer.from(content))).toBe(true);
  });

  test("HEAD: the headers of GET, no body", async () => {
    const connection = await connect();
    connection.write(`HEAD /api/v1/documents/${id}/content HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
    const answer = await connection.until((text) => text.includes("\r\n\r\n"));
    await Bun.sleep(200);
    expect(connection.received()).toBe(answer); // not a byte of body
    expect(answer).toStartWith("HTTP/1.1 200 ");
    expect(answer).toMatch(new RegExp(`\r\ncontent-length: ${content.byteLength}\r\n`, "i"));
    expect(answer).toMatch(new RegExp(`\r\netag: ${etag}\r\n`, "i"));
    connection.end();
  });

  test("HEAD with Accept-Encoding: gzip: the compressed GET's header fields, no Content-Length (never 0), no body", async () => {
    const connection = await connect();
    connection.write(
      `HEAD /api/v1/documents/${id}/content HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\nAccept-Encoding: gzip\r\n\r\n`,
    );
    const answer = await connection.until((text) => text.includes("\r\n\r\n"));
    await Bun.sleep(200);
    expect(connection.received()).toBe(answer); // not a byte of body
    expect(answer).toStartWith("HTTP/1.1 200 ");
    expect(answer).toMatch(/\r\ncontent-encoding: gzip\r\n/i);
    expect(answer).toMatch(new RegExp(`\r\netag: ${etag.slice(0, -1)}-gzip"\r\n`, "i"));
    expect(answer).not.toMatch(/\r\ncontent-length:/i);
    connection.end();
  });

  test("If-None-Match: 304 without a body", async () => {
    const connection = await connect();
    connection.write(
      `GET /api/v1/documents/${id}/content HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\nIf-None-Match: ${etag}\r\n\r\n`,
    );
    const answer = await connection.until((text) => text.includes("\r\n\r\n"));
    await Bun.sleep(200);
    expect(connection.received()).toBe(answer);
    expect(answer).toStartWith("HTTP/1.1 304 ");
    expect(answer).not.toMatch(/transfer-encoding/i);
    connection.end();
  });

  test("Range: 206 with the slice, 416 past the end", async () => {
    const partial = await call("GET", `/api/v1/documents/${id}/content`, { range: "bytes=100-199" });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe(`bytes 100-199/${content.byteLength}`);
    expect(partial.headers.get("content-length")).toBe("100");
    expect(Buffer.from(await partial.bytes()).equals(Buffer.from(content.subarray(100, 200)))).toBe(true);
    const suffix = await call("GET", `/api/v1/documents/${id}/content`, { range: "bytes=-10" });
    expect(await suffix.text()).toBe(new TextDecoder().decode(content.subarray(-10)));
    const past = await call("GET", `/api/v1/documents/${id}/content`, { range: `bytes=${content.byteLength}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${content.byteLength}`);
  });

  test("gzip: the download compressed as it streams, the same bytes once decoded", async () => {
    const compressed = await call("GET", `/api/v1/documents/${id}/content`, { "accept-encoding": "gzip" });
    expect(compressed.headers.get("content-encoding")).toBe("gzip");
    expect(compressed.headers.get("etag")).toBe(`${etag.slice(0, -1)}-gzip"`);
    expect(compressed.headers.get("content-length")).toBeNull();
    expect(Buffer.from(gunzipSync(await compressed.bytes())).equals(Buffer.from(content))).toBe(true);
  });

  test("a client that leaves part way through a download does not disturb the server", async () => {
    const connection = await connect();
    connection.write(`GET /api/v1/documents/${id}/content HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
    await connection.until((text) => text.length > 100_000);
    connection.end();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const again = await call("GET", `/api/v1/documents/${id}/content`);
    expect((await again.bytes()).byteLength).toBe(content.byteLength);
  });

  test("the API answers as usual: metadata with its ETag, a list, an update, a utility run, an NDJSON export and import, errors", async () => {
    const metadata = await call("GET", `/api/v1/documents/${id}`);
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get("etag")).toMatch(/^"v\d+"$/);
    expect(metadata.headers.get("content-length")).toBe(String((await metadata.clone().bytes()).byteLength));
    expect(((await metadata.json()) as any).document.name).toBe("big.json");
    expect((await call("GET", `/api/v1/documents/${id}`, { "if-none-match": metadata.headers.get("etag")! })).status).toBe(304);
    const list = await call("GET", "/api/v1/documents?limit=10");
    expect(((await list.json()) as any).documents.length).toBeGreaterThan(0);
    const renamed = await call(
      "PUT",
      `/api/v1/documents/${id}`,
      { "content-type": "application/json" },
      JSON.stringify({ name: "renamed.json" }),
    );
    expect(((await renamed.json()) as any).document.name).toBe("renamed.json");
    const run = await call(
      "POST",
      "/api/v1/utilities/structure.find-replace",
      { "content-type": "application/json" },
      JSON.stringify({ inputs: { primary: { a: "alpha" } }, config: { search: "alpha", replacement: "omega" } }),
    );
    expect(await run.json()).toMatchObject({ success: true, output: { a: "omega" } });
    const exported = await call("GET", "/api/v1/export");
    expect(exported.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await exported.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.document.name)).toContain("renamed.json");
    const imported = await call(
      "POST",
      "/api/v1/import",
      { "content-type": "application/x-ndjson" },
      ['{"document":{"name":"one"},"content":1}', "not json", '{"document":{"name":"three"},"content":[3]}'].join("\n"),
    );
    const results = (await imported.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results.map((result) => [result.line, result.error?.code ?? "created"])).toEqual([
      [1, "created"],
      [2, "malformed_json"],
      [3, "created"],
    ]);
    const missing = await call("GET", "/api/v1/documents/doc_missing");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("application/problem+json");
    expect((await fetch(`${server.url}/api/v1/usage`)).status).toBe(401);
  });
});

test("SIGTERM: the node listener drains and the process exits 0", async () => {
  expect(await server.stop("SIGTERM")).toBe(0);
});
