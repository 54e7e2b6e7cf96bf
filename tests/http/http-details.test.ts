/**
 * HTTP details: the Bearer scheme in any case (never the query), 405 with Allow, 415 for encodings and
 * form media types, the access log's status, the plan error, and Expect: 100-continue on the real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ADMIN_KEY, createTestApp, type TestApp } from "../support/app";
import { type ServerOnTestDatabase, startServerOnTestDatabase } from "../support/server";

setDefaultTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe("Authorization scheme", () => {
  test("bearer and BEARER are accepted like Bearer", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer", "bEaReR"]) {
      const response = await t.request("GET", "/api/v1/usage", { key: null, headers: { authorization: `${scheme} ${ADMIN_KEY}` } });
      expect(response.status).toBe(200);
    }
  });

  test("another scheme and an empty token stay 401", async () => {
    for (const authorization of [`Basic ${ADMIN_KEY}`, "Bearer ", `Bearer${ADMIN_KEY}`]) {
      const response = await t.json("GET", "/api/v1/usage", { key: null, headers: { authorization } });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  test("a key in the query string (access_token) is 400 token_in_query naming the header: never read as a key, never logged", async () => {
    t.logLines.length = 0;
    const cases = [
      { path: `/api/v1/usage?access_token=${ADMIN_KEY}`, key: null },
      { path: `/api/v1/documents?limit=5&access_token=${ADMIN_KEY}`, key: undefined }, // with a valid header too
      { path: `/api/v1/nowhere?access_token=${ADMIN_KEY}`, key: null }, // an unknown route checks it first as well
      { path: "/api/v1/usage?access_token=", key: undefined },
    ];
    for (const { path, key } of cases) {
      const response = await t.json("GET", path, { key, headers: { "x-request-id": "query-token" } });
      expect([path, response.status, response.body.code]).toEqual([path, 400, "token_in_query"]);
      expect(response.body.detail).toContain("Authorization: Bearer");
      expect(JSON.stringify(response.body)).not.toContain(ADMIN_KEY);
    }
    // a parameter that merely contains the name is not a credential
    for (const path of ["/api/v1/usage?x=access_token", "/api/v1/usage?not_access_token=1"]) {
      expect((await t.json("GET", path, {})).body.code).not.toBe("token_in_query");
    }
    await Bun.sleep(5);
    const logged = t.logLines.filter((line) => line.includes("query-token"));
    expect(logged.length).toBe(cases.length);
    expect(t.logLines.join("\n")).not.toContain(ADMIN_KEY);
  });
});

describe("405 Method Not Allowed", () => {
  test("an unsupported method on a known path is 405 with Allow, after authentication", async () => {
    const patch = await t.json("PATCH", "/api/v1/documents", {});
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(patch.body).toMatchObject({ code: "method_not_allowed", status: 405 });
    expect(patch.headers.get("content-type")).toBe("application/problem+json");
    const onItem = await t.json("POST", "/api/v1/documents/some-id", {});
    expect(onItem.headers.get("allow")).toBe("DELETE, GET, HEAD, PUT");
    expect((await t.json("PATCH", "/api/v1/documents", { key: null })).status).toBe(401);
    expect((await t.json("DELETE", "/health", { key: null })).headers.get("allow")).toBe("GET, HEAD");
  });

  test("HEAD, listed in Allow beside GET, is answered", async () => {
    const head = await t.request("HEAD", "/health", { key: null });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  test("an unknown path stays 404", async () => {
    const unknown = await t.json("GET", "/api/v1/documents/a/b/c", {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("route_not_found");
  });
});

describe("415 for bodies Kiln does not read", () => {
  test("Content-Encoding gzip, br or deflate: 415 unsupported_media_type, nothing stored", async () => {
    const { key } = await t.newAccount();
    const body = JSON.stringify({ name: "zipped", content: { a: 1 } });
    for (const encoding of ["gzip", "br", "deflate"]) {
      const response = await t.json("POST", "/api/v1/documents", {
        key,
        rawBody: Bun.gzipSync(body),
        headers: { "content-encoding": encoding },
      });
      expect(response.status).toBe(415);
      expect(response.body.code).toBe("unsupported_media_type");
      expect(response.body.detail).toContain(`Content-Encoding '${encoding}'`);
    }
    expect((await t.json("GET", "/api/v1/documents", { key })).body.documents).toEqual([]);
    const identity = await t.json("POST", "/api/v1/documents", { key, rawBody: body, headers: { "content-encoding": "identity" } });
    expect(identity.status).toBe(201);
  });

  test("multipart and form bodies: 415 (not malformed_json); a bad key is still 401 first", async () => {
    const { key } = await t.newAccount();
    const form = new FormData();
    form.set("name", "x");
    const multipart = await t.app.handle(
      new Request("http://localhost/api/v1/documents", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form }),
    );
    expect(multipart.status).toBe(415);
    expect(((await multipart.json()) as { detail: string }).detail).toContain("multipart/form-data");
    const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "kept", content: { a: 1 } } });
    const urlencoded = await t.json("PUT", `/api/v1/documents/${created.body.document.id}/content`, {
      key,
      rawBody: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(urlencoded.status).toBe(415);
    expect(await (await t.request("GET", `/api/v1/documents/${created.body.document.id}/content`, { key })).text()).toBe('{"a":1}');
    const noKey = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key: null,
      rawBody: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(noKey.status).toBe(401);
    const utility = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key,
      rawBody: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(utility.status).toBe(415);
  });
});

describe("what curl sends", () => {
  test("curl -d's form type is 415 naming application/json; -H 'Content-Type: application/json', --json or no type are read as JSON", async () => {
    const { key } = await t.newAccount();
    const body = '{"name":"curl.json","content":{"a":1}}';
    const form = await t.json("POST", "/api/v1/documents", {
      key,
      rawBody: body,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([form.status, form.body.code]).toEqual([415, "unsupported_media_type"]);
    expect(form.body.detail).toContain("application/json");
    for (const headers of [
      { "content-type": "application/json" },
      { "content-type": "application/json", accept: "application/json" }, // curl --json
    ] as Record<string, string>[]) {
      expect((await t.json("POST", "/api/v1/documents", { key, rawBody: body, headers })).status).toBe(201);
    }
    const untyped = await t.app.handle(
      new Request("http://localhost/api/v1/documents", {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: new TextEncoder().encode(body), // bytes: no Content-Type at all
      }),
    );
    expect(untyped.status).toBe(201);
  });
});

describe("the access log", () => {
  test("records the status sent, also for a Response a handler built itself (a 304 download)", async () => {
    const { key } = await t.newAccount();
    const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "logged", content: [1] } });
    const requestId = "log-status-304";
    const response = await t.request("GET", `/api/v1/documents/${created.body.document.id}/content`, {
      key,
      headers: { "if-none-match": "*", "x-request-id": requestId },
    });
    expect(response.status).toBe(304);
    // the line is written after the response, a tick or a few later depending on the handler's awaits
    const logged = () => t.logLines.map((text) => JSON.parse(text)).find((entry) => entry.requestId === requestId);
    for (let waited = 0; !logged() && waited < 2000; waited += 10) await Bun.sleep(10);
    const line = logged();
    expect(line).toMatchObject({ msg: "request", status: 304 });
  });
});

describe("messages", () => {
  test("a bad plan name names the allowed plans", async () => {
    const response = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "x", plan: "gold" } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: "/plan", message: "must be one of starter, pro, team, unlimited" }]);
  });
});

describe("Expect: 100-continue on the real server", () => {
  const key = "kiln_ExpectContinueKey0123456789abcdefABCDEF";
  let server: ServerOnTestDatabase;
  beforeAll(async () => {
    server = await startServerOnTestDatabase(key, { UTILITY_MAX_PAYLOAD_BYTES: "1000000" });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Sends the head only, then the body once `sendBodyAfter` matches what came back; resolves with all that came back. */
  async function exchange(head: string, body: string, sendBodyAfter: RegExp | null): Promise<string> {
    const { hostname, port } = new URL(server.url);
    let received = "";
    let bodySent = false;
    return new Promise((resolve, reject) => {
      const finished = (text: string) =>
        /\r\n\r\n/.test(text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "")) && !/^HTTP\/1\.1 100 Continue\r\n\r\n$/.test(text);
      Bun.connect({
        hostname,
        port: Number(port),
        socket: {
          open(socket) {
            socket.write(head);
          },
          data(socket, chunk) {
            received += new TextDecoder().decode(chunk);
            if (sendBodyAfter && !bodySent && sendBodyAfter.test(received)) {
              bodySent = true;
              socket.write(body);
            }
            const final = received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
            if (final.startsWith("HTTP/1.1 ") && finished(received) && (!sendBodyAfter || bodySent)) {
              const [, length] = final.match(/content-length: (\d+)/i) ?? [];
              if (final.length >= final.indexOf("\r\n\r\n") + 4 + Number(length ?? 0)) {
                socket.end();
                resolve(received);
              }
            }
          },
          error(_socket, error) {
            reject(error);
          },
          close() {
            resolve(received);
          },
        },
      }).catch(reject);
    });
  }

  const head = (authorization: string, length: number, path = "/api/v1/documents") =>
    `POST ${path} HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

  test("a bad key gets its 401 without sending the body; a good one gets 100, then 201 once the body came", async () => {
    const body = JSON.stringify({ name: "continued", content: { a: 1 } });
    const refused = await exchange(head("Bearer kiln_wrong-key-000000000000000000000000", 5_000_000), "", null);
    expect(refused).toMatch(/HTTP\/1\.1 401 /);
    expect(refused).toContain("application/problem+json");
    const accepted = await exchange(head(`Bearer ${key}`, body.length), body, /^HTTP\/1\.1 100 Continue\r\n\r\n/);
    expect(accepted).toStartWith("HTTP/1.1 100 Continue\r\n\r\n");
    expect(accepted).toMatch(/HTTP\/1\.1 201 /);
  });

  test("a declared size over the utility limit gets 413 without sending the body", async () => {
    const response = await exchange(head(`Bearer ${key}`, 5_000_000, "/api/v1/utilities/schema.clean-json"), "", null);
    expect(response).toMatch(/HTTP\/1\.1 413 /);
    expect(response).toContain("payload_too_large");
  });
});
