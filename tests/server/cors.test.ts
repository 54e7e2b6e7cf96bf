import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { createTestApp, type TestApp } from "../support/app";

// test apps, worker threads and real servers take seconds on a loaded machine
setDefaultTimeout(60_000);

const APP = "https://app.example.com";
const preflight = (t: TestApp, origin: string, path = "/api/v1/documents") =>
  t.request("OPTIONS", path, {
    key: null,
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type, idempotency-key",
    },
  });

const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));

describe("CORS_ORIGINS unset (the default)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("no CORS header on any answer, and a preflight is not answered", async () => {
    const answer = await t.request("GET", "/api/v1/documents", { headers: { origin: APP } });
    expect(answer.status).toBe(200);
    expect(corsHeaders(answer)).toEqual([]);
    const options = await preflight(t, APP);
    expect(options.status).not.toBe(204);
    expect(corsHeaders(options)).toEqual([]);
  });
});

describe("CORS_ORIGINS with two origins", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: `${APP}, http://localhost:5173` });
  });
  afterAll(() => t.close());

  test("a preflight from a listed origin is answered 204 without a key", async () => {
    const response = await preflight(t, "http://localhost:5173", "/api/v1/utilities/structure.flatten-nest");
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")).toContain("Idempotency-Key");
    expect(response.headers.get("access-control-allow-headers")).toContain("Authorization");
    // a resumed event stream and a conditional range download send these
    expect(response.headers.get("access-control-allow-headers")).toContain("Last-Event-ID");
    expect(response.headers.get("access-control-allow-headers")).toContain("If-Range");
    expect(response.headers.get("access-control-max-age")).toBe("600");
    expect(response.headers.get("vary")).toContain("Origin");
  });

  test("a preflight carries an X-Request-Id like every answer: the caller's when sane, else a fresh one", async () => {
    const fresh = await preflight(t, APP);
    expect(fresh.status).toBe(204);
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await preflight(t, APP)).headers.get("x-request-id")).not.toBe(fresh.headers.get("x-request-id"));
    const given = await t.request("OPTIONS", "/api/v1/documents", {
      key: null,
      headers: { origin: APP, "access-control-request-method": "GET", "x-request-id": "trace-preflight.1" },
    });
    expect(given.status).toBe(204);
    expect(given.headers.get("x-request-id")).toBe("trace-preflight.1");
    const hostile = await t.request("OPTIONS", "/api/v1/documents", {
      key: null,
      headers: { origin: APP, "access-control-request-method": "GET", "x-request-id": "bad id\u0001" },
    });
    expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("answers to a listed origin carry its origin and expose the API's headers, errors included", async () => {
    const { key } = await t.newAccount({ plan: "starter" });
    const created = await t.request("POST", "/api/v1/documents", { key, body: { name: "x", content: 1 }, headers: { origin: APP } });
    expect(created.status).toBe(201);
    expect(created.headers.get("access-control-allow-origin")).toBe(APP);
    expect(created.headers.get("vary")).toContain("Origin");
    const exposed = created.headers.get("access-control-expose-headers")!.split(", ");
    for (const name of [
      "ETag",
      "Location",
      "Retry-After",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Idempotent-Replayed",
      "X-Request-Id",
    ])
      expect(exposed).toContain(name);
    const denied = await t.request("GET", "/api/v1/documents", { key: null, headers: { origin: APP } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe(APP);
  });

  test("an origin not listed gets no CORS header and no preflight answer", async () => {
    const answer = await t.request("GET", "/api/v1/documents", { headers: { origin: "https://evil.example.com" } });
    expect(answer.status).toBe(200);
    expect(corsHeaders(answer)).toEqual([]);
    const options = await preflight(t, "https://evil.example.com");
    expect(options.status).not.toBe(204);
    expect(corsHeaders(options)).toEqual([]);
  });

  test("a request without Origin (not a browser) is unchanged", async () => {
    expect(corsHeaders(await t.request("GET", "/api/v1/documents"))).toEqual([]);
  });
});

describe("CORS_ORIGINS=*", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: "*" });
  });
  afterAll(() => t.close());

  test("every origin is allowed with Access-Control-Allow-Origin: *", async () => {
    const options = await preflight(t, "https://anyone.example.org");
    expect(options.status).toBe(204);
    expect(options.headers.get("access-control-allow-origin")).toBe("*");
    const answer = await t.request("GET", "/health", { key: null, headers: { origin: "https://anyone.example.org" } });
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("CORS_ORIGINS is checked at start-up", () => {
  test.each(["not a url", "https://app.example.com/", "https://app.example.com/path", "*, https://a.example.com"])(
    "%p is refused, naming the variable",
    (value) => {
      expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
    },
  );

  test("origins with ports and an empty value are accepted", () => {
    expect(loadConfig({ CORS_ORIGINS: "http://localhost:5173,https://a.example.com" }).corsOrigins).toEqual([
      "http://localhost:5173",
      "https://a.example.com",
    ]);
    expect(loadConfig({ CORS_ORIGINS: "" }).corsOrigins).toEqual([]);
  });
});
