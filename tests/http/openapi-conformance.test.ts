/**
 * Response conformance: a table of real requests, each naming the operation it exercises and the status
 * it expects; every response is checked against GET /openapi.json (declared status, headers, media type,
 * body schema with no undeclared field). Every operation of the document needs at least one success and
 * one error case here, so a route added without cases fails this file.
 *
 * To cover a new route: add its cases to CASES (a `setup` in FIXTURES when it needs data).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { openApiName } from "../../src/modules/utilities/model";
import { fannedOut } from "../modules/webhooks/support";
import { ADMIN_KEY, createTestApp, type RequestOptions, type TestApp } from "../support/app";
import { ConformanceChecker } from "../support/conformance";
import { examplesOf, utilitySections } from "../support/docs";

setDefaultTimeout(30_000);

interface Fixtures {
  key: string;
  accountId: string;
  /** a key with the utilities permission only */
  utilitiesOnlyKey: string;
  /** a key with the documents permission only */
  documentsOnlyKey: string;
  /** an account allowed one request per minute (its first request is spent in setup) */
  limitedKey: string;
  /** an account without credits and with a 10-byte maximum document size */
  tinyKey: string;
  documentId: string;
  /** a document of tinyKey's account whose first version no longer fits its lowered maxDocumentBytes */
  tinyDocumentId: string;
  deletedId: string;
  keyId: string;
  /** path and query of a signed download link of documentId */
  link: string;
  /** a saved pipeline, and one that a case deletes */
  pipelineId: string;
  doomedPipelineId: string;
  /** a key with documents and webhooks, its webhook (with one delivery), and one that a case deletes */
  webhooksKey: string;
  webhookId: string;
  doomedWebhookId: string;
  deliveryId: string;
  /** a queued job of key's account (nothing runs it here), and one that a case cancels */
  jobId: string;
  doomedJobId: string;
  /** a schema of key's account governing the folder "governed" (mode reject), and an unbound one a case deletes */
  schemaId: string;
  doomedSchemaId: string;
  /** a document of key's account in the folder "warned", which a schema in mode warn governs (it requires `id`) */
  warnedDocumentId: string;
  /** a query index of key's account on the empty folder "indexed", and one that a case drops */
  indexId: string;
  doomedIndexId: string;
}

interface Case {
  operation: string;
  name: string;
  status: number;
  method: string;
  path: (f: Fixtures) => string;
  options?: (f: Fixtures) => RequestOptions;
}

const doc = (f: Fixtures) => `/api/v1/documents/${f.documentId}`;
const user = (f: Fixtures, options: RequestOptions = {}): RequestOptions => ({ key: f.key, ...options });
const NO_KEY = { key: null };
/** A case made with key's own key, with a JSON body when one is given. */
const asUser = (operation: string, name: string, status: number, method: string, path: (f: Fixtures) => string, body?: unknown): Case => ({
  operation,
  name,
  status,
  method,
  path,
  options: (f) => user(f, body === undefined ? {} : { body }),
});

const BAD_KEY = { key: "kiln_not-a-real-key-000000000000000000" };
const METRICS_TOKEN = "conformance-metrics-token-0123";

const PIPELINE_STEPS = [{ utility: "schema.clean-json" }, { utility: "structure.pick-fields", config: { paths: ["id", "x"] } }];

export const CASES: Case[] = [
  { operation: "getOpenApiDocument", name: "the document", status: 200, method: "GET", path: () => "/openapi.json", options: () => NO_KEY },
  { operation: "getApiReference", name: "the page", status: 200, method: "GET", path: () => "/docs", options: () => NO_KEY },
  { operation: "getServiceIndex", name: "the links", status: 200, method: "GET", path: () => "/", options: () => NO_KEY },
  {
    operation: "getApiReferenceViewer",
    name: "the script",
    status: 200,
    method: "GET",
    path: () => "/docs/standalone.js",
    options: () => NO_KEY,
  },
  { operation: "getHealth", name: "ok", status: 200, method: "GET", path: () => "/health", options: () => NO_KEY },
  { operation: "getReadiness", name: "ready", status: 200, method: "GET", path: () => "/ready", options: () => NO_KEY },
  { operation: "getMetrics", name: "scraped", status: 200, method: "GET", path: () => "/metrics", options: () => ({ key: METRICS_TOKEN }) },
  { operation: "getMetrics", name: "no token", status: 401, method: "GET", path: () => "/metrics", options: () => NO_KEY },
  { operation: "getMetrics", name: "an API key instead", status: 401, method: "GET", path: () => "/metrics", options: (f) => user(f) },

  {
    operation: "createAccount",
    name: "created",
    status: 201,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: () => ({ body: { name: "conformance", plan: "pro" } }),
  },
  {
    operation: "createAccount",
    name: "unknown plan",
    status: 400,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: () => ({ body: { name: "x", plan: "gold" } }),
  },
  {
    operation: "createAccount",
    name: "malformed JSON",
    status: 400,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: () => ({ rawBody: "{" }),
  },
  {
    operation: "createAccount",
    name: "no key",
    status: 401,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: () => ({ ...NO_KEY, body: { name: "x" } }),
  },
  {
    operation: "createAccount",
    name: "not admin",
    status: 403,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: (f) => user(f, { body: { name: "x" } }),
  },
  {
    operation: "createAccount",
    name: "multipart",
    status: 415,
    method: "POST",
    path: () => "/api/v1/admin/accounts",
    options: () => ({ rawBody: "--b\r\n\r\n--b--", headers: { "content-type": "multipart/form-data; boundary=b" } }),
  },
  { operation: "getAccount", name: "found", status: 200, method: "GET", path: (f) => `/api/v1/admin/accounts/${f.accountId}` },
  { operation: "getAccount", name: "unknown", status: 404, method: "GET", path: () => "/api/v1/admin/accounts/nope" },
  {
    operation: "getAccount",
    name: "bad key",
    status: 401,
    method: "GET",
    path: (f) => `/api/v1/admin/accounts/${f.accountId}`,
    options: () => BAD_KEY,
  },
  {
    operation: "updateAccount",
    name: "renamed",
    status: 200,
    method: "PATCH",
    path: (f) => `/api/v1/admin/accounts/${f.accountId}`,
    options: () => ({ body: { name: "renamed" } }),
  },
  {
    operation: "updateAccount",
    name: "empty body object",
    status: 400,
    method: "PATCH",
    path: (f) => `/api/v1/admin/accounts/${f.accountId}`,
    options: () => ({ body: {} }),
  },
  {
    operation: "updateAccount",
    name: "unknown",
    status: 404,
    method: "PATCH",
    path: () => "/api/v1/admin/accounts/nope",
    options: () => ({ body: { name: "x" } }),
  },
  {
    operation: "createKey",
    name: "created",
    status: 201,
    method: "POST",
    path: () => "/api/v1/admin/keys",
    options: (f) => ({ body: { accountId: f.accountId, permissions: ["documents"], name: "ci" } }),
  },
  {
    operation: "createKey",
    name: "no permissions",
    status: 400,
    method: "POST",
    path: () => "/api/v1/admin/keys",
    options: (f) => ({ body: { accountId: f.accountId, permissions: [] } }),
  },
  {
    operation: "createKey",
    name: "unknown account",
    status: 404,
    method: "POST",
    path: () => "/api/v1/admin/keys",
    options: () => ({ body: { accountId: "nope", permissions: ["documents"] } }),
  },
  { operation: "listKeys", name: "all", status: 200, method: "GET", path: () => "/api/v1/admin/keys" },
  { operation: "listKeys", name: "by account", status: 200, method: "GET", path: (f) => `/api/v1/admin/keys?accountId=${f.accountId}` },
  { operation: "listKeys", name: "unknown query parameter", status: 400, method: "GET", path: () => "/api/v1/admin/keys?nope=1" },
  { operation: "revokeKey", name: "revoked", status: 200, method: "DELETE", path: (f) => `/api/v1/admin/keys/${f.keyId}` },
  { operation: "revokeKey", name: "unknown", status: 404, method: "DELETE", path: () => "/api/v1/admin/keys/nope" },

  { operation: "getUsage", name: "usage", status: 200, method: "GET", path: () => "/api/v1/usage", options: (f) => user(f) },
  { operation: "getUsage", name: "no key", status: 401, method: "GET", path: () => "/api/v1/usage", options: () => NO_KEY },
  {
    operation: "getUsage",
    name: "rate limited",
    status: 429,
    method: "GET",
    path: () => "/api/v1/usage",
    options: (f) => ({ key: f.limitedKey }),
  },

  { operation: "listEvents", name: "events", status: 200, method: "GET", path: () => "/api/v1/events?limit=5", options: (f) => user(f) },
  {
    operation: "listEvents",
    name: "invalid cursor",
    status: 400,
    method: "GET",
    path: () => "/api/v1/events?after=nope",
    options: (f) => user(f),
  },
  { operation: "listEvents", name: "no key", status: 401, method: "GET", path: () => "/api/v1/events", options: () => NO_KEY },
  // a stream that ends by itself after a second (timeout=1), so its body can be read whole
  {
    operation: "streamEvents",
    name: "a stream",
    status: 200,
    method: "GET",
    path: () => "/api/v1/events/stream?timeout=1",
    options: (f) => user(f),
  },
  {
    operation: "streamEvents",
    name: "invalid Last-Event-ID",
    status: 400,
    method: "GET",
    path: () => "/api/v1/events/stream",
    options: (f) => user(f, { headers: { "Last-Event-ID": "nope" } }),
  },
  { operation: "streamEvents", name: "no key", status: 401, method: "GET", path: () => "/api/v1/events/stream", options: () => NO_KEY },

  ...webhookCases(),
  ...jobCases(),
  ...schemaCases(),
  ...indexCases(),
  ...utilityRunCases(),

  { operation: "listUtilities", name: "catalogue", status: 200, method: "GET", path: () => "/api/v1/utilities", options: (f) => user(f) },
  { operation: "listUtilities", name: "no key", status: 401, method: "GET", path: () => "/api/v1/utilities", options: () => NO_KEY },
  {
    operation: "getUtility",
    name: "one",
    status: 200,
    method: "GET",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f),
  },
  {
    operation: "getUtility",
    name: "unknown",
    status: 404,
    method: "GET",
    path: () => "/api/v1/utilities/no.such",
    options: (f) => user(f),
  },
  {
    operation: "getUtility",
    name: "lowercase bearer",
    status: 200,
    method: "GET",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => ({ key: null, headers: { authorization: `bearer ${f.key}` } }),
  },
  {
    operation: "runUtility",
    name: "run",
    status: 200,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: { a: null, b: 1 } } } }),
  },
  {
    operation: "runUtility",
    name: "with an Idempotency-Key",
    status: 200,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: { a: null } } }, headers: { "idempotency-key": "conformance-run" } }),
  },
  {
    operation: "runUtility",
    name: "the same key and body: replayed",
    status: 200,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: { a: null } } }, headers: { "idempotency-key": "conformance-run" } }),
  },
  {
    operation: "runUtility",
    name: "the same key, another body",
    status: 422,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: 1 } }, headers: { "idempotency-key": "conformance-run" } }),
  },
  {
    operation: "runUtility",
    name: "bad config",
    status: 400,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: {} }, config: { nope: 1 } } }),
  },
  {
    operation: "runUtility",
    name: "unknown utility",
    status: 404,
    method: "POST",
    path: () => "/api/v1/utilities/no.such",
    options: (f) => user(f, { body: { inputs: { primary: 1 } } }),
  },
  {
    operation: "runUtility",
    name: "no credits",
    status: 402,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => ({ key: f.tinyKey, body: { inputs: { primary: {} } } }),
  },
  {
    operation: "runUtility",
    name: "over the payload limit",
    status: 413,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: "x".repeat(5000) } } }),
  },
  {
    operation: "runUtility",
    name: "gzip body",
    status: 415,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { rawBody: Bun.gzipSync(JSON.stringify({ inputs: { primary: 1 } })), headers: { "content-encoding": "gzip" } }),
  },
  {
    operation: "runUtility",
    name: "documents-only key",
    status: 403,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => ({ key: f.documentsOnlyKey, body: { inputs: { primary: 1 } } }),
  },

  {
    operation: "listDocuments",
    name: "page",
    status: 200,
    method: "GET",
    path: () => "/api/v1/documents?limit=5",
    options: (f) => user(f),
  },
  {
    operation: "listDocuments",
    name: "deleted",
    status: 200,
    method: "GET",
    path: () => "/api/v1/documents?deleted=true",
    options: (f) => user(f),
  },
  {
    operation: "listDocuments",
    name: "limit 0",
    status: 400,
    method: "GET",
    path: () => "/api/v1/documents?limit=0",
    options: (f) => user(f),
  },
  {
    operation: "listDocuments",
    name: "bad cursor",
    status: 400,
    method: "GET",
    path: () => "/api/v1/documents?cursor=zz",
    options: (f) => user(f),
  },
  {
    operation: "listDocuments",
    name: "no documents permission",
    status: 403,
    method: "GET",
    path: () => "/api/v1/documents",
    options: (f) => ({ key: f.utilitiesOnlyKey }),
  },
  {
    operation: "createDocument",
    name: "created",
    status: 201,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { name: "made", content: { a: 1 }, tags: ["t"], folder: "x/y", description: "d" } }),
  },
  {
    operation: "createDocument",
    name: "no name",
    status: 400,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { content: 1 } }),
  },
  {
    operation: "createDocument",
    name: "too large for the account",
    status: 413,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => ({ key: f.tinyKey, body: { name: "big", content: "x".repeat(100) } }),
  },
  {
    operation: "createDocument",
    name: "with an Idempotency-Key",
    status: 201,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { name: "once", content: 1 }, headers: { "idempotency-key": "conformance-create" } }),
  },
  {
    operation: "createDocument",
    name: "the same key and body: replayed",
    status: 201,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { name: "once", content: 1 }, headers: { "idempotency-key": "conformance-create" } }),
  },
  {
    operation: "createDocument",
    name: "the same key, another body",
    status: 422,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { name: "twice", content: 2 }, headers: { "idempotency-key": "conformance-create" } }),
  },
  {
    operation: "createDocument",
    name: "an Idempotency-Key too long",
    status: 400,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { body: { name: "x", content: 1 }, headers: { "idempotency-key": "k".repeat(256) } }),
  },
  {
    operation: "createDocument",
    name: "deflate body",
    status: 415,
    method: "POST",
    path: () => "/api/v1/documents",
    options: (f) => user(f, { rawBody: "x", headers: { "content-encoding": "deflate" } }),
  },
  { operation: "getDocument", name: "found", status: 200, method: "GET", path: doc, options: (f) => user(f) },
  {
    operation: "getDocument",
    name: "not modified",
    status: 304,
    method: "GET",
    path: doc,
    options: (f) => user(f, { headers: { "if-none-match": "*" } }),
  },
  { operation: "getDocument", name: "unknown", status: 404, method: "GET", path: () => "/api/v1/documents/nope", options: (f) => user(f) },
  {
    operation: "updateDocument",
    name: "renamed",
    status: 200,
    method: "PUT",
    path: doc,
    options: (f) => user(f, { body: { name: "renamed", tags: ["a"] } }),
  },
  {
    operation: "updateDocument",
    name: "unknown field",
    status: 400,
    method: "PUT",
    path: doc,
    options: (f) => user(f, { body: { nope: 1 } }),
  },
  {
    operation: "updateDocument",
    name: "stale If-Match",
    status: 412,
    method: "PUT",
    path: doc,
    options: (f) => user(f, { body: { name: "x" }, headers: { "if-match": '"v0"' } }),
  },
  {
    operation: "updateDocument",
    name: "unknown",
    status: 404,
    method: "PUT",
    path: () => "/api/v1/documents/nope",
    options: (f) => user(f, { body: { name: "x" } }),
  },
  {
    operation: "downloadDocumentContent",
    name: "bytes",
    status: 200,
    method: "GET",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f),
  },
  {
    operation: "downloadDocumentContent",
    name: "not modified",
    status: 304,
    method: "GET",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { headers: { "if-none-match": "*" } }),
  },
  {
    operation: "downloadDocumentContent",
    name: "unknown",
    status: 404,
    method: "GET",
    path: () => "/api/v1/documents/nope/content",
    options: (f) => user(f),
  },
  {
    operation: "downloadDocumentContent",
    name: "a range",
    status: 206,
    method: "GET",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { headers: { range: "bytes=0-2" } }),
  },
  {
    operation: "downloadDocumentContent",
    name: "a range past the end",
    status: 416,
    method: "GET",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { headers: { range: "bytes=1000000-" } }),
  },
  {
    operation: "downloadDocumentContent",
    name: "a range whose If-Range no longer holds",
    status: 200,
    method: "GET",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { headers: { range: "bytes=0-2", "if-range": '"stale"' } }),
  },
  {
    operation: "downloadDocumentContent",
    name: "the key in the query string",
    status: 400,
    method: "GET",
    path: (f) => `${doc(f)}/content?access_token=${f.key}`,
    options: () => NO_KEY,
  },
  {
    operation: "createDocumentLink",
    name: "created",
    status: 201,
    method: "POST",
    path: (f) => `${doc(f)}/links`,
    options: (f) => user(f, { body: { expiresIn: 600 } }),
  },
  {
    operation: "createDocumentLink",
    name: "unknown field",
    status: 400,
    method: "POST",
    path: (f) => `${doc(f)}/links`,
    options: (f) => user(f, { body: { ttl: 600 } }),
  },
  {
    operation: "createDocumentLink",
    name: "unknown",
    status: 404,
    method: "POST",
    path: () => "/api/v1/documents/nope/links",
    options: (f) => user(f),
  },
  { operation: "createDocumentLink", name: "no key", status: 401, method: "POST", path: (f) => `${doc(f)}/links`, options: () => NO_KEY },
  { operation: "downloadThroughLink", name: "bytes", status: 200, method: "GET", path: (f) => f.link, options: () => NO_KEY },
  {
    operation: "downloadThroughLink",
    name: "not modified",
    status: 304,
    method: "GET",
    path: (f) => f.link,
    options: () => ({ ...NO_KEY, headers: { "if-none-match": "*" } }),
  },
  {
    operation: "downloadThroughLink",
    name: "altered",
    status: 403,
    method: "GET",
    path: (f) => f.link.replace(/sig=(.)/, (_, first) => `sig=${first === "A" ? "B" : "A"}`),
    options: () => NO_KEY,
  },
  {
    operation: "downloadThroughLink",
    name: "a range",
    status: 206,
    method: "GET",
    path: (f) => f.link,
    options: () => ({ ...NO_KEY, headers: { range: "bytes=-2" } }),
  },
  {
    operation: "downloadThroughLink",
    name: "a range past the end",
    status: 416,
    method: "GET",
    path: (f) => f.link,
    options: () => ({ ...NO_KEY, headers: { range: "bytes=1000000-" } }),
  },
  {
    operation: "replaceDocumentContent",
    name: "replaced",
    status: 200,
    method: "PUT",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: "[1, 2, 3]" }),
  },
  {
    operation: "replaceDocumentContent",
    name: "not JSON",
    status: 400,
    method: "PUT",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: "{nope" }),
  },
  {
    operation: "replaceDocumentContent",
    name: "stale If-Match",
    status: 412,
    method: "PUT",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: "1", headers: { "if-match": '"0"' } }),
  },
  { operation: "downloadThroughLink", name: "content changed", status: 410, method: "GET", path: (f) => f.link, options: () => NO_KEY },
  {
    operation: "patchDocumentContent",
    name: "JSON Patch",
    status: 200,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) =>
      user(f, { rawBody: '[{"op":"add","path":"/-","value":4}]', headers: { "content-type": "application/json-patch+json" } }),
  },
  {
    operation: "patchDocumentContent",
    name: "merge patch",
    status: 200,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: '{"a":[1, 2, 3]}', headers: { "content-type": "application/merge-patch+json" } }),
  },
  {
    operation: "patchDocumentContent",
    name: "path does not exist",
    status: 400,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: '[{"op":"remove","path":"/nope"}]', headers: { "content-type": "application/json-patch+json" } }),
  },
  {
    operation: "patchDocumentContent",
    name: "test fails",
    status: 409,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) =>
      user(f, { rawBody: '[{"op":"test","path":"/a","value":0}]', headers: { "content-type": "application/json-patch+json" } }),
  },
  {
    operation: "patchDocumentContent",
    name: "stale If-Match",
    status: 412,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: "{}", headers: { "content-type": "application/merge-patch+json", "if-match": '"0"' } }),
  },
  {
    operation: "patchDocumentContent",
    name: "plain JSON",
    status: 415,
    method: "PATCH",
    path: (f) => `${doc(f)}/content`,
    options: (f) => user(f, { rawBody: "{}" }),
  },
  {
    operation: "patchDocumentContent",
    name: "unknown",
    status: 404,
    method: "PATCH",
    path: () => "/api/v1/documents/nope/content",
    options: (f) => user(f, { rawBody: "{}", headers: { "content-type": "application/merge-patch+json" } }),
  },
  {
    operation: "listDocumentVersions",
    name: "page",
    status: 200,
    method: "GET",
    path: (f) => `${doc(f)}/versions?limit=2`,
    options: (f) => user(f),
  },
  {
    operation: "listDocumentVersions",
    name: "limit 0",
    status: 400,
    method: "GET",
    path: (f) => `${doc(f)}/versions?limit=0`,
    options: (f) => user(f),
  },
  {
    operation: "listDocumentVersions",
    name: "unknown",
    status: 404,
    method: "GET",
    path: () => "/api/v1/documents/nope/versions",
    options: (f) => user(f),
  },
  {
    operation: "downloadDocumentVersion",
    name: "bytes",
    status: 200,
    method: "GET",
    path: (f) => `${doc(f)}/versions/1/content`,
    options: (f) => user(f),
  },
  {
    operation: "downloadDocumentVersion",
    name: "not modified",
    status: 304,
    method: "GET",
    path: (f) => `${doc(f)}/versions/1/content`,
    options: (f) => user(f, { headers: { "if-none-match": "*" } }),
  },
  {
    operation: "downloadDocumentVersion",
    name: "version not kept",
    status: 404,
    method: "GET",
    path: (f) => `${doc(f)}/versions/99/content`,
    options: (f) => user(f),
  },
  {
    operation: "downloadDocumentVersion",
    name: "a range",
    status: 206,
    method: "GET",
    path: (f) => `${doc(f)}/versions/1/content`,
    options: (f) => user(f, { headers: { range: "bytes=1-" } }),
  },
  {
    operation: "downloadDocumentVersion",
    name: "a range past the end",
    status: 416,
    method: "GET",
    path: (f) => `${doc(f)}/versions/1/content`,
    options: (f) => user(f, { headers: { range: "bytes=1000000-1000001" } }),
  },
  {
    operation: "restoreDocumentVersion",
    name: "restored",
    status: 200,
    method: "POST",
    path: (f) => `${doc(f)}/versions/1/restore`,
    options: (f) => user(f),
  },
  {
    operation: "restoreDocumentVersion",
    name: "stale If-Match",
    status: 412,
    method: "POST",
    path: (f) => `${doc(f)}/versions/1/restore`,
    options: (f) => user(f, { headers: { "if-match": '"0"' } }),
  },
  {
    operation: "restoreDocumentVersion",
    name: "version not kept",
    status: 404,
    method: "POST",
    path: (f) => `${doc(f)}/versions/99/restore`,
    options: (f) => user(f),
  },
  {
    operation: "restoreDocumentVersion",
    name: "too large for the account",
    status: 413,
    method: "POST",
    path: (f) => `/api/v1/documents/${f.tinyDocumentId}/versions/1/restore`,
    options: (f) => ({ key: f.tinyKey }),
  },
  {
    operation: "deleteDocument",
    name: "stale If-Match",
    status: 412,
    method: "DELETE",
    path: doc,
    options: (f) => user(f, { headers: { "if-match": '"v0"' } }),
  },
  {
    operation: "deleteDocument",
    name: "unknown",
    status: 404,
    method: "DELETE",
    path: () => "/api/v1/documents/nope",
    options: (f) => user(f),
  },
  { operation: "deleteDocument", name: "deleted", status: 200, method: "DELETE", path: doc, options: (f) => user(f) },
  {
    operation: "restoreDocument",
    name: "restored",
    status: 200,
    method: "POST",
    path: (f) => `${doc(f)}/restore`,
    options: (f) => user(f),
  },
  {
    operation: "restoreDocument",
    name: "not deleted",
    status: 409,
    method: "POST",
    path: (f) => `${doc(f)}/restore`,
    options: (f) => user(f),
  },
  { operation: "purgeDocument", name: "active", status: 409, method: "POST", path: (f) => `${doc(f)}/purge`, options: (f) => user(f) },
  {
    operation: "purgeDocument",
    name: "purged",
    status: 200,
    method: "POST",
    path: (f) => `/api/v1/documents/${f.deletedId}/purge`,
    options: (f) => user(f),
  },
  {
    operation: "purgeDocument",
    name: "unknown",
    status: 404,
    method: "POST",
    path: () => "/api/v1/documents/nope/purge",
    options: (f) => user(f),
  },
  {
    operation: "exportDocuments",
    name: "every document",
    status: 200,
    method: "GET",
    path: () => "/api/v1/export",
    options: (f) => user(f),
  },
  {
    operation: "exportDocuments",
    name: "one folder, deleted ones",
    status: 200,
    method: "GET",
    path: () => "/api/v1/export?folder=x/y&deleted=true",
    options: (f) => user(f),
  },
  {
    operation: "exportDocuments",
    name: "a bad folder",
    status: 400,
    method: "GET",
    path: () => "/api/v1/export?folder=a/../b",
    options: (f) => user(f),
  },
  {
    operation: "exportDocuments",
    name: "utilities-only key",
    status: 403,
    method: "GET",
    path: () => "/api/v1/export",
    options: (f) => ({ key: f.utilitiesOnlyKey }),
  },
  {
    operation: "importDocuments",
    name: "lines",
    status: 200,
    method: "POST",
    path: () => "/api/v1/import",
    options: (f) =>
      user(f, {
        rawBody: '{"document":{"name":"in","id":"ignored"},"content":[1.0]}\nnot json\n',
        headers: { "content-type": "application/x-ndjson" },
      }),
  },
  {
    operation: "importDocuments",
    name: "not NDJSON",
    status: 415,
    method: "POST",
    path: () => "/api/v1/import",
    options: (f) => user(f, { rawBody: "{}" }),
  },
  {
    operation: "importDocuments",
    name: "no key",
    status: 401,
    method: "POST",
    path: () => "/api/v1/import",
    options: () => ({ ...NO_KEY, rawBody: "", headers: { "content-type": "application/x-ndjson" } }),
  },
  { operation: "listFolders", name: "folders", status: 200, method: "GET", path: () => "/api/v1/folders", options: (f) => user(f) },
  { operation: "listFolders", name: "bad key", status: 401, method: "GET", path: () => "/api/v1/folders", options: () => BAD_KEY },
  {
    operation: "runUtility",
    name: "stored input, output saved",
    status: 200,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) =>
      user(f, { body: { inputs: { primaryDocumentId: f.documentId }, output: { saveAs: { name: "saved" }, return: false } } }),
  },
  {
    operation: "runUtility",
    name: "stored input not found",
    status: 404,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primaryDocumentId: f.deletedId } } }),
  },
  {
    operation: "runUtility",
    name: "stale saveTo ifMatch",
    status: 412,
    method: "POST",
    path: () => "/api/v1/utilities/schema.clean-json",
    options: (f) => user(f, { body: { inputs: { primary: {} }, output: { saveTo: f.documentId, ifMatch: '"stale"' } } }),
  },
  {
    operation: "runPipeline",
    name: "run",
    status: 200,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => user(f, { body: { steps: PIPELINE_STEPS, inputs: { primary: [{ id: 1, x: null }] } } }),
  },
  {
    operation: "runPipeline",
    name: "stored input, output saved",
    status: 200,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) =>
      user(f, {
        body: {
          steps: [{ utility: "schema.clean-json" }],
          inputs: { primaryDocumentId: f.documentId },
          output: { saveAs: { name: "piped" }, return: false },
        },
      }),
  },
  {
    operation: "runPipeline",
    name: "unknown utility",
    status: 400,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => user(f, { body: { steps: [{ utility: "no.such" }], inputs: { primary: 1 } } }),
  },
  {
    operation: "runPipeline",
    name: "no credits",
    status: 402,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => ({ key: f.tinyKey, body: { steps: PIPELINE_STEPS, inputs: { primary: 1 } } }),
  },
  {
    operation: "runPipeline",
    name: "stored input without the documents permission",
    status: 403,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => ({ key: f.utilitiesOnlyKey, body: { steps: PIPELINE_STEPS, inputs: { primaryDocumentId: f.documentId } } }),
  },
  {
    operation: "runPipeline",
    name: "stored input not found",
    status: 404,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => user(f, { body: { steps: PIPELINE_STEPS, inputs: { primaryDocumentId: f.deletedId } } }),
  },
  {
    operation: "runPipeline",
    name: "stale saveTo ifMatch",
    status: 412,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) =>
      user(f, { body: { steps: PIPELINE_STEPS, inputs: { primary: {} }, output: { saveTo: f.documentId, ifMatch: '"stale"' } } }),
  },
  {
    operation: "runPipeline",
    name: "over the payload limit",
    status: 413,
    method: "POST",
    path: () => "/api/v1/pipelines/run",
    options: (f) => user(f, { body: { steps: PIPELINE_STEPS, inputs: { primary: "x".repeat(5000) } } }),
  },
  {
    operation: "createPipeline",
    name: "created",
    status: 201,
    method: "POST",
    path: () => "/api/v1/pipelines",
    options: (f) => user(f, { body: { name: "made", description: "d", steps: PIPELINE_STEPS } }),
  },
  {
    operation: "createPipeline",
    name: "unknown utility",
    status: 400,
    method: "POST",
    path: () => "/api/v1/pipelines",
    options: (f) => user(f, { body: { name: "bad", steps: [{ utility: "no.such" }] } }),
  },
  {
    operation: "createPipeline",
    name: "over 1 MiB",
    status: 413,
    method: "POST",
    path: () => "/api/v1/pipelines",
    options: (f) => user(f, { body: { name: "big", steps: [{ utility: "merge.deep-merge", secondary: "x".repeat(1 << 20) }] } }),
  },
  {
    operation: "listPipelines",
    name: "a page",
    status: 200,
    method: "GET",
    path: () => "/api/v1/pipelines?limit=1",
    options: (f) => user(f),
  },
  {
    operation: "listPipelines",
    name: "bad limit",
    status: 400,
    method: "GET",
    path: () => "/api/v1/pipelines?limit=0",
    options: (f) => user(f),
  },
  {
    operation: "getPipeline",
    name: "found",
    status: 200,
    method: "GET",
    path: (f) => `/api/v1/pipelines/${f.pipelineId}`,
    options: (f) => user(f),
  },
  {
    operation: "getPipeline",
    name: "not found",
    status: 404,
    method: "GET",
    path: () => "/api/v1/pipelines/pip_none",
    options: (f) => user(f),
  },
  {
    operation: "updatePipeline",
    name: "renamed",
    status: 200,
    method: "PUT",
    path: (f) => `/api/v1/pipelines/${f.pipelineId}`,
    options: (f) => user(f, { body: { name: "renamed", description: null } }),
  },
  {
    operation: "updatePipeline",
    name: "no field",
    status: 400,
    method: "PUT",
    path: (f) => `/api/v1/pipelines/${f.pipelineId}`,
    options: (f) => user(f, { body: {} }),
  },
  {
    operation: "updatePipeline",
    name: "not found",
    status: 404,
    method: "PUT",
    path: () => "/api/v1/pipelines/pip_none",
    options: (f) => user(f, { body: { name: "x" } }),
  },
  {
    operation: "deletePipeline",
    name: "deleted",
    status: 200,
    method: "DELETE",
    path: (f) => `/api/v1/pipelines/${f.doomedPipelineId}`,
    options: (f) => user(f),
  },
  {
    operation: "deletePipeline",
    name: "not found",
    status: 404,
    method: "DELETE",
    path: () => "/api/v1/pipelines/pip_none",
    options: (f) => user(f),
  },
  {
    operation: "runSavedPipeline",
    name: "run",
    status: 200,
    method: "POST",
    path: (f) => `/api/v1/pipelines/${f.pipelineId}/run`,
    options: (f) => user(f, { body: { inputs: { primary: [{ id: 1, x: null }] } } }),
  },
  {
    operation: "runSavedPipeline",
    name: "steps in the body",
    status: 400,
    method: "POST",
    path: (f) => `/api/v1/pipelines/${f.pipelineId}/run`,
    options: (f) => user(f, { body: { steps: PIPELINE_STEPS, inputs: { primary: 1 } } }),
  },
  {
    operation: "runSavedPipeline",
    name: "not found",
    status: 404,
    method: "POST",
    path: () => "/api/v1/pipelines/pip_none/run",
    options: (f) => user(f, { body: { inputs: { primary: 1 } } }),
  },
];

let t: TestApp;
let checker: ConformanceChecker;
/** The webhooks API's cases (fixtures: webhooksKey, webhookId with one delivery, doomedWebhookId). */
/**
 * Each utility's own run operation (run<Utility>, its config typed): the first example of its section of
 * docs/utilities.md runs (200), and a config field it does not have is refused (400).
 */
function utilityRunCases(): Case[] {
  return utilitySections().flatMap((section) => {
    const [example] = examplesOf(section);
    if (!example) return [];
    const operation = `run${openApiName(section.id)}`;
    const path = () => `/api/v1/utilities/${section.id}`;
    const own = (f: Fixtures, body: unknown): RequestOptions => ({ key: f.utilitiesOnlyKey, body });
    return [
      { operation, name: "its documented example", status: 200, method: "POST", path, options: (f) => own(f, example.request) },
      {
        operation,
        name: "a config field it does not have",
        status: 400,
        method: "POST",
        path,
        options: (f) => own(f, { inputs: { primary: 1 }, config: { noSuchField: 1 } }),
      },
    ];
  });
}

/** Cases sent with the key `keyOf` picks, a body when given. */
function casesAs(keyOf: (f: Fixtures) => string) {
  return (operation: string, name: string, status: number, method: string, path: (f: Fixtures) => string, body?: unknown): Case => ({
    operation,
    name,
    status,
    method,
    path,
    options: (f) => ({ key: keyOf(f), ...(body === undefined ? {} : { body }) }),
  });
}

/** The schemas API's cases, and a write its schema refuses (fixtures: schemaId governs "governed", doomedSchemaId). */
function schemaCases(): Case[] {
  const schemas = "/api/v1/schemas";
  const at = casesAs((f) => f.key);
  return [
    at("createSchema", "created", 201, "POST", () => schemas, { name: "s", schema: { type: "object" }, mode: "warn" }),
    at("createSchema", "not a schema", 400, "POST", () => schemas, { name: "s", schema: { type: 7 } }),
    at("listSchemas", "listed", 200, "GET", () => `${schemas}?limit=2`),
    at("listSchemas", "invalid cursor", 400, "GET", () => `${schemas}?cursor=nope`),
    at("getSchema", "found", 200, "GET", (f) => `${schemas}/${f.schemaId}?version=1`),
    at("getSchema", "not found", 404, "GET", () => `${schemas}/sch_none`),
    at("updateSchema", "renamed", 200, "PATCH", (f) => `${schemas}/${f.schemaId}`, { name: "orders" }),
    at("updateSchema", "folder taken", 409, "PATCH", (f) => `${schemas}/${f.doomedSchemaId}`, { folders: ["governed"] }),
    at("deleteSchema", "still bound", 409, "DELETE", (f) => `${schemas}/${f.schemaId}`),
    at("deleteSchema", "deleted", 200, "DELETE", (f) => `${schemas}/${f.doomedSchemaId}`),
    at("validateAgainstSchema", "invalid content", 200, "POST", (f) => `${schemas}/${f.schemaId}/validate`, { content: { id: "x" } }),
    at("validateAgainstSchema", "neither content nor documentId", 400, "POST", (f) => `${schemas}/${f.schemaId}/validate`, {}),
    at("auditSchema", "started", 202, "POST", (f) => `${schemas}/${f.schemaId}/audit`),
    at("auditSchema", "not found", 404, "POST", () => `${schemas}/sch_none/audit`),
    at("createDocument", "breaks its folder's schema", 422, "POST", () => "/api/v1/documents", {
      name: "bad",
      folder: "governed",
      content: { id: "x" },
    }),
    // every write its folder's schema warns about answers Kiln-Schema-Warnings
    at("createDocument", "warned by its folder's schema", 201, "POST", () => "/api/v1/documents", {
      name: "w",
      folder: "warned",
      content: {},
    }),
    at("replaceDocumentContent", "warned by its folder's schema", 200, "PUT", (f) => `/api/v1/documents/${f.warnedDocumentId}/content`, {}),
    at("runUtility", "output saved into a warned folder", 200, "POST", () => "/api/v1/utilities/schema.clean-json", {
      inputs: { primary: { x: 1 } },
      output: { saveAs: { name: "saved", folder: "warned" } },
    }),
    at("runPipeline", "output saved into a warned folder", 200, "POST", () => "/api/v1/pipelines/run", {
      steps: PIPELINE_STEPS,
      inputs: { primary: { x: 1 } },
      output: { saveAs: { name: "piped", folder: "warned" } },
    }),
  ];
}

function webhookCases(): Case[] {
  const hooks = "/api/v1/webhooks";
  const at = casesAs((f) => f.webhooksKey);
  return [
    at("createWebhook", "created", 201, "POST", () => hooks, { url: "https://hooks.example.invalid/in", eventTypes: ["document.*"] }),
    at("createWebhook", "private address", 400, "POST", () => hooks, { url: "https://10.0.0.1/in" }),
    {
      operation: "createWebhook",
      name: "no permission",
      status: 403,
      method: "POST",
      path: () => hooks,
      options: (f) => user(f, { body: { url: "https://a.invalid/" } }),
    },
    at("listWebhooks", "listed", 200, "GET", () => `${hooks}?limit=2`),
    at("listWebhooks", "invalid cursor", 400, "GET", () => `${hooks}?cursor=nope`),
    at("getWebhook", "found", 200, "GET", (f) => `${hooks}/${f.webhookId}`),
    at("getWebhook", "not found", 404, "GET", () => `${hooks}/whk_none`),
    at("updateWebhook", "disabled", 200, "PATCH", (f) => `${hooks}/${f.webhookId}`, { enabled: true, folder: null }),
    at("updateWebhook", "no field", 400, "PATCH", (f) => `${hooks}/${f.webhookId}`, {}),
    at("updateWebhook", "not found", 404, "PATCH", () => `${hooks}/whk_none`, { enabled: false }),
    at("rotateWebhookSecret", "rotated", 200, "POST", (f) => `${hooks}/${f.webhookId}/rotate-secret`),
    at("rotateWebhookSecret", "not found", 404, "POST", () => `${hooks}/whk_none/rotate-secret`),
    at("listWebhookDeliveries", "listed", 200, "GET", (f) => `${hooks}/${f.webhookId}/deliveries?limit=5`),
    at("listWebhookDeliveries", "bad status", 400, "GET", (f) => `${hooks}/${f.webhookId}/deliveries?status=lost`),
    at("listWebhookDeliveries", "not found", 404, "GET", () => `${hooks}/whk_none/deliveries`),
    at("retryWebhookDelivery", "retried", 202, "POST", (f) => `${hooks}/${f.webhookId}/deliveries/${f.deliveryId}/retry`),
    at("retryWebhookDelivery", "not found", 404, "POST", (f) => `${hooks}/${f.webhookId}/deliveries/dlv_none/retry`),
    at("deleteWebhook", "deleted", 200, "DELETE", (f) => `${hooks}/${f.doomedWebhookId}`),
    at("deleteWebhook", "not found", 404, "DELETE", () => `${hooks}/whk_none`),
  ];
}

function jobCases(): Case[] {
  const jobs = "/api/v1/jobs";
  const body = { source: { folder: "jobs" }, utility: "structure.pick-fields", config: { fields: ["x"] }, output: { mode: "report" } };
  const at = asUser;
  return [
    at("createJob", "queued", 202, "POST", () => jobs, body),
    at("createJob", "empty folder", 400, "POST", () => jobs, { ...body, source: { folder: "nothing-here" } }),
    at("createJob", "unknown utility", 404, "POST", () => jobs, { ...body, utility: "no.such" }),
    {
      operation: "createJob",
      name: "no documents permission",
      status: 403,
      method: "POST",
      path: () => jobs,
      options: (f) => ({ key: f.utilitiesOnlyKey, body }),
    },
    at("listJobs", "listed", 200, "GET", () => `${jobs}?limit=2&state=queued`),
    at("listJobs", "invalid cursor", 400, "GET", () => `${jobs}?cursor=nope`),
    at("getJob", "found", 200, "GET", (f) => `${jobs}/${f.jobId}`),
    at("getJob", "not found", 404, "GET", () => `${jobs}/job_none`),
    at("cancelJob", "cancelled", 200, "POST", (f) => `${jobs}/${f.doomedJobId}/cancel`),
    at("cancelJob", "not found", 404, "POST", () => `${jobs}/job_none/cancel`),
    at("getJobResults", "streamed", 200, "GET", (f) => `${jobs}/${f.jobId}/results`),
    at("getJobResults", "not found", 404, "GET", () => `${jobs}/job_none/results`),
  ];
}

function indexCases(): Case[] {
  const indexes = "/api/v1/indexes";
  const at = asUser;
  const query = "/api/v1/documents/query";
  return [
    at("createIndex", "accepted", 202, "POST", () => indexes, { folder: "other", fields: [{ path: "/a" }, { path: "/b", order: "desc" }] }),
    at("createIndex", "no fields", 400, "POST", () => indexes, { folder: "other", fields: [] }),
    at("listIndexes", "listed", 200, "GET", () => indexes),
    { operation: "listIndexes", name: "no key", status: 401, method: "GET", path: () => indexes, options: () => NO_KEY },
    at("getIndex", "found", 200, "GET", (f) => `${indexes}/${f.indexId}`),
    at("getIndex", "not found", 404, "GET", () => `${indexes}/idx_none`),
    at("deleteIndex", "dropped", 200, "DELETE", (f) => `${indexes}/${f.doomedIndexId}`),
    at("deleteIndex", "not found", 404, "DELETE", () => `${indexes}/idx_none`),
    at("queryDocuments", "answered", 200, "POST", () => query, { folder: "indexed", filter: { "/a": 1 }, fields: ["/a"], count: "capped" }),
    at("queryDocuments", "needs an index", 400, "POST", () => query, { folder: "indexed", filter: { "/z": 1 } }),
    at("queryDocuments", "invalid", 400, "POST", () => query, { folder: "indexed", filter: { "/a": { $regex: "x" } } }),
  ];
}

let fixtures: Fixtures;
let checked = 0;
/** every problem answered by the cases: the operation, the status and the code the body carried */
const answered: { operation: string; status: number; code: string }[] = [];

beforeAll(async () => {
  t = await createTestApp({ UTILITY_MAX_PAYLOAD_BYTES: "4096", METRICS_TOKEN });
  checker = new ConformanceChecker((await t.json("GET", "/openapi.json", { key: null })).body);
  const { accountId, key } = await t.newAccount();
  const { key: utilitiesOnlyKey } = await t.newAccount({ permissions: ["utilities"] });
  const { key: documentsOnlyKey } = await t.newAccount({ permissions: ["documents"] });
  const { key: limitedKey } = await t.newAccount({ rateLimitPerMinute: 1 });
  expect((await t.request("GET", "/api/v1/usage", { key: limitedKey })).status).toBe(200);
  const { key: tinyKey, accountId: tinyAccountId } = await t.newAccount({ monthlyCredits: 0, maxDocumentBytes: 10 });
  const tiny = await t.json("POST", "/api/v1/documents", { key: tinyKey, body: { name: "tiny", contentText: "[1,2,3,4]" } });
  expect((await t.request("PUT", `/api/v1/documents/${tiny.body.document.id}/content`, { key: tinyKey, rawBody: "1" })).status).toBe(200);
  expect(
    (await t.request("PATCH", `/api/v1/admin/accounts/${tinyAccountId}`, { key: ADMIN_KEY, body: { maxDocumentBytes: 5 } })).status,
  ).toBe(200);
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "fixture", content: { x: 1 } } });
  const deleted = await t.json("POST", "/api/v1/documents", { key, body: { name: "to purge", content: [] } });
  expect((await t.request("DELETE", `/api/v1/documents/${deleted.body.document.id}`, { key })).status).toBe(200);
  const newKey = await t.json("POST", "/api/v1/admin/keys", { key: ADMIN_KEY, body: { accountId, permissions: ["documents"] } });
  const link = new URL((await t.json("POST", `/api/v1/documents/${created.body.document.id}/links`, { key })).body.url);
  const pipeline = await t.json("POST", "/api/v1/pipelines", { key, body: { name: "fixture", steps: PIPELINE_STEPS } });
  const doomed = await t.json("POST", "/api/v1/pipelines", { key, body: { name: "to delete", steps: PIPELINE_STEPS } });
  const { key: webhooksKey } = await t.newAccount({ permissions: ["documents", "webhooks"] });
  const webhook = await t.json("POST", "/api/v1/webhooks", { key: webhooksKey, body: { url: "https://hooks.example.invalid/fixture" } });
  const doomedWebhook = await t.json("POST", "/api/v1/webhooks", {
    key: webhooksKey,
    body: { url: "https://hooks.example.invalid/doomed" },
  });
  await t.json("POST", "/api/v1/documents", { key: webhooksKey, body: { name: "for a delivery", content: 1 } });
  await fannedOut(t, webhook.body.webhook.id);
  const deliveries = await t.json("GET", `/api/v1/webhooks/${webhook.body.webhook.id}/deliveries`, { key: webhooksKey });
  await t.json("POST", "/api/v1/documents", { key, body: { name: "for a job", folder: "jobs", content: { x: 1 } } });
  const jobBody = { source: { folder: "jobs" }, utility: "structure.pick-fields", config: { fields: ["x"] }, output: { mode: "report" } };
  const job = await t.json("POST", "/api/v1/jobs", { key, body: jobBody });
  const doomedJob = await t.json("POST", "/api/v1/jobs", { key, body: jobBody });
  const order = { type: "object", properties: { id: { type: "integer" } } };
  const schema = await t.json("POST", "/api/v1/schemas", { key, body: { name: "order", schema: order, folders: ["governed"] } });
  const doomedSchema = await t.json("POST", "/api/v1/schemas", { key, body: { name: "to delete", schema: true } });
  await t.json("POST", "/api/v1/documents", { key, body: { name: "governed", folder: "governed", content: { id: 1 } } });
  await t.json("POST", "/api/v1/schemas", {
    key,
    body: { name: "loose", schema: { type: "object", required: ["id"] }, folders: ["warned"], mode: "warn" },
  });
  const warned = await t.json("POST", "/api/v1/documents", { key, body: { name: "warned", folder: "warned", content: { id: 1 } } });
  const index = await t.json("POST", "/api/v1/indexes", { key, body: { folder: "indexed", fields: [{ path: "/a" }] } });
  const doomedIndex = await t.json("POST", "/api/v1/indexes", {
    key,
    body: { folder: "indexed", name: "doomed", fields: [{ path: "/b" }] },
  });
  await t.json("POST", "/api/v1/documents", { key, body: { name: "indexed", folder: "indexed/below", content: { a: 1 } } });
  fixtures = {
    key,
    accountId,
    utilitiesOnlyKey,
    documentsOnlyKey,
    limitedKey,
    tinyKey,
    documentId: created.body.document.id,
    tinyDocumentId: tiny.body.document.id,
    deletedId: deleted.body.document.id,
    keyId: newKey.body.apiKey.id,
    pipelineId: pipeline.body.pipeline.id,
    doomedPipelineId: doomed.body.pipeline.id,
    link: link.pathname + link.search,
    webhooksKey,
    webhookId: webhook.body.webhook.id,
    doomedWebhookId: doomedWebhook.body.webhook.id,
    deliveryId: deliveries.body.deliveries[0].id,
    jobId: job.body.job.id,
    doomedJobId: doomedJob.body.job.id,
    schemaId: schema.body.schema.id,
    doomedSchemaId: doomedSchema.body.schema.id,
    warnedDocumentId: warned.body.document.id,
    indexId: index.body.index.id,
    doomedIndexId: doomedIndex.body.index.id,
  };
});
afterAll(async () => {
  console.log(`conformance: ${checked} responses checked over ${checker.operations.length} operations`);
  await t.close();
});

describe("every response conforms to GET /openapi.json", () => {
  for (const entry of CASES) {
    test(`${entry.operation}: ${entry.name} → ${entry.status}`, async () => {
      const path = entry.path(fixtures);
      const response = await t.request(entry.method, path, entry.options?.(fixtures));
      expect(response.status).toBe(entry.status);
      if (entry.status >= 400)
        answered.push({
          operation: entry.operation,
          status: entry.status,
          code: ((await response.clone().json()) as { code: string }).code,
        });
      expect(await checker.check(entry.operation, entry.method, path, response)).toEqual([]);
      checked++;
    });
  }
});

describe("the table covers the document", () => {
  test("every operation has a success case and an error case", () => {
    const missing = checker.operations.flatMap((op) => {
      const cases = CASES.filter((entry) => entry.operation === op.id);
      const gaps = [];
      if (!cases.some((entry) => entry.status < 400)) gaps.push(`${op.id}: no success case`);
      if (op.spec.security?.length && !cases.some((entry) => entry.status >= 400)) gaps.push(`${op.id}: no error case`);
      return gaps;
    });
    expect(missing).toEqual([]);
  });

  test("every code a case answered is listed in the enum of its status", () => {
    const unlisted = answered.filter(({ operation, status, code }) => {
      const schema = checker.operation(operation).spec.responses[status]?.content?.["application/problem+json"]?.schema;
      return !schema?.allOf?.[1]?.properties?.code?.enum?.includes(code);
    });
    expect(unlisted).toEqual([]);
    console.log(`conformance: ${answered.length} problems answered, ${new Set(answered.map((entry) => entry.code)).size} codes`);
    expect(answered.length).toBe(CASES.filter((entry) => entry.status >= 400).length);
  });

  test("every case names an operation of the document", () => {
    expect(CASES.map((entry) => entry.operation).filter((id) => !checker.operations.some((op) => op.id === id))).toEqual([]);
  });

  test("the checker refuses an undeclared status, an undeclared field and an undeclared header", async () => {
    const problem = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
    const health = { success: true, status: "ok" };
    expect(await checker.check("getHealth", "GET", "/health", problem(200, health))).toEqual([]);
    expect((await checker.check("getHealth", "GET", "/health", problem(418, health)))[0]).toContain("status 418 is not declared");
    expect((await checker.check("getHealth", "GET", "/health", problem(200, { ...health, extra: 1 })))[0]).toContain(
      "must NOT have additional properties",
    );
    expect((await checker.check("getHealth", "GET", "/health", problem(200, health, { etag: '"x"' })))[0]).toContain(
      "header etag is sent but not declared",
    );
    const unknownCode = {
      success: false,
      error: "x",
      code: "nope",
      type: "about:blank",
      title: "Not Found",
      status: 404,
      detail: "x",
      requestId: "r",
    };
    const answer = problem(404, unknownCode, { "content-type": "application/problem+json" });
    expect((await checker.check("getDocument", "GET", "/api/v1/documents/x", answer))[0]).toContain(
      "must be equal to one of the allowed values",
    );
  });
});
