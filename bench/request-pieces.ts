/**
 * What each piece of Kiln's per-request work costs, alone, in a loop (`bun bench/request-pieces.ts`):
 * the CPU µs per call, the best of 5 rounds. The pieces are the ones a GET of a document's metadata
 * runs besides its SQL (bench/request-cost.ts times the whole request), so the table in bench/README.md
 * can say where Kiln's added microseconds go. Rows that make a Request include its cost (the first row).
 */
import { Elysia } from "elysia";
import { hashApiKey } from "../src/core/keys";
import { bearerToken, tokenInQuery } from "../src/http/bearer";
import { requestLog } from "../src/http/context";
import { requiredPermission } from "../src/http/permissions";
import { DocumentResponse, IdParams } from "../src/modules/documents/model";
import { createLogger } from "../src/observability/logger";
import { withCorsAndCompression } from "../src/server/final-response";
import { requestState } from "../src/server/request-state";
import { bestCpuPerCall } from "./lib/report";

const CALLS = 200_000;
const url = "http://127.0.0.1:3000/api/v1/documents/doc_01a21c68-c125-77c5-b6d4-11827c36f0bf";
const headers = { authorization: "Bearer kiln_BenchKey0123456789abcdefABCDEF0123" };
const document = {
  success: true as const,
  document: {
    id: "doc_01a21c68-c125-77c5-b6d4-11827c36f0bf",
    name: "bench-1.json",
    title: "bench-1.json",
    tags: [] as string[],
    folder: "/",
    fileSize: 1012,
    version: 1,
    createdAt: 1764236000000,
    updatedAt: 1764236000000,
  },
};

async function cost(name: string, make: (i: number) => unknown | Promise<unknown>): Promise<void> {
  const best = await bestCpuPerCall(make, CALLS, 5);
  console.log(`${name.padEnd(62)} ${best.toFixed(2)} µs`);
}

const requests = Array.from({ length: 1024 }, () => new Request(url, { headers }));
const fresh = () => new Request(url, { headers });
const json = () => new Response(JSON.stringify(document), { headers: { "content-type": "application/json" } });

await cost("a Request (the rows below that make one include it)", () => fresh());
await cost("a JSON Response of the metadata (both servers build one)", () => json());
await cost("request state: WeakMap entry, UUIDv7 request id, clock", () => requestState(fresh()));
await cost("bearer token, area permission, token-in-query check", (i) => {
  const request = requests[i & 1023];
  return [bearerToken(request.headers.get("authorization")), requiredPermission("/api/v1/documents/x"), tokenInQuery(request)];
});
await cost("key hash (SHA-256; the bare handler hashes too)", () => hashApiKey(headers.authorization));
const final = withCorsAndCompression(async () => json(), []);
await cost("JSON Response + compression and CORS checks on it", () => final(fresh()));
const log = requestLog(createLogger("info", () => {}))!;
await cost("log line at LOG_LEVEL=info (JSON built, written nowhere)", (i) => log(requests[i & 1023], json()));
const plain = new Elysia({ normalize: false }).get("/api/v1/documents/:id", () => document);
await cost("Elysia: route, handler, JSON Response", () => plain.handle(fresh()));
const hooked = new Elysia({ normalize: false })
  .onRequest(({ set }) => {
    set.headers["X-Request-Id"] = "id";
  })
  .use(
    new Elysia({ name: "auth" })
      .derive({ as: "global" }, async ({ request }) => ({ principal: request.headers.get("authorization") }))
      .onTransform({ as: "global" }, () => {}),
  )
  .onError({ as: "global" }, () => {})
  .get("/api/v1/documents/:id", () => document, { params: IdParams, response: { 200: DocumentResponse } });
await cost("Elysia with Kiln's hooks shape and the route's schemas", () => hooked.handle(fresh()));
process.exit(0);
