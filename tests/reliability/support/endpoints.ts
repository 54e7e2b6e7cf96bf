/**
 * Every endpoint of the API (docs/api.md), with the permission its area needs and a
 * valid body to mutate. The fuzz and isolation suites iterate over this one table, so an endpoint
 * added to the API is covered by adding it here.
 */
import type { Permission } from "../../../src/core/plans";

export interface Endpoint {
  method: string;
  /** `:id` is a document, account or key id; `:utilityId` a utility id */
  path: string;
  /** null: any valid key; undefined: public */
  permission: Permission | null | undefined;
  /** a second permission the route checks itself (jobs need documents besides utilities) */
  alsoNeeds?: Permission;
  /** a valid body, the seed of mutated bodies */
  validBody?: () => unknown;
  /** the body is the raw document content itself (PUT …/content) or a patch of it (PATCH …/content) */
  rawContent?: boolean;
}

const pipelineSteps = () => [
  { utility: "schema.clean-json", config: { removeNulls: true } },
  { utility: "merge.deep-merge", secondary: { c: [1] } },
];
const documentBody = () => ({ name: "report.json", content: { a: 1, list: [1, 2, 3] }, description: "d", tags: ["x"], folder: "fuzz/a" });

export const ENDPOINTS: readonly Endpoint[] = [
  { method: "GET", path: "/api/v1/documents", permission: "documents" },
  { method: "POST", path: "/api/v1/documents", permission: "documents", validBody: documentBody },
  { method: "GET", path: "/api/v1/documents/:id", permission: "documents" },
  { method: "GET", path: "/api/v1/documents/:id/content", permission: "documents" },
  {
    method: "PUT",
    path: "/api/v1/documents/:id",
    permission: "documents",
    validBody: () => ({ name: "renamed", tags: ["y"], folder: null }),
  },
  {
    method: "PUT",
    path: "/api/v1/documents/:id/content",
    permission: "documents",
    validBody: () => ({ replaced: true }),
    rawContent: true,
  },
  {
    method: "PATCH",
    path: "/api/v1/documents/:id/content",
    permission: "documents",
    validBody: () => ({ a: null, b: { c: 1.0 } }),
    rawContent: true,
  },
  { method: "GET", path: "/api/v1/documents/:id/versions", permission: "documents" },
  { method: "GET", path: "/api/v1/documents/:id/versions/1/content", permission: "documents" },
  { method: "POST", path: "/api/v1/documents/:id/versions/1/restore", permission: "documents" },
  { method: "DELETE", path: "/api/v1/documents/:id", permission: "documents" },
  { method: "POST", path: "/api/v1/documents/:id/purge", permission: "documents" },
  { method: "POST", path: "/api/v1/documents/:id/restore", permission: "documents" },
  { method: "GET", path: "/api/v1/folders", permission: "documents" },
  { method: "GET", path: "/api/v1/utilities", permission: "utilities" },
  { method: "GET", path: "/api/v1/utilities/:utilityId", permission: "utilities" },
  {
    method: "POST",
    path: "/api/v1/utilities/:utilityId",
    permission: "utilities",
    validBody: () => ({ inputs: { primary: { a: 1, b: null, c: "x" } }, config: {} }),
  },
  {
    method: "POST",
    path: "/api/v1/pipelines/run",
    permission: "utilities",
    validBody: () => ({ steps: pipelineSteps(), inputs: { primary: { a: 1, b: null } }, output: { return: false } }),
  },
  {
    method: "POST",
    path: "/api/v1/pipelines",
    permission: "utilities",
    validBody: () => ({ name: "fuzz", description: "d", steps: pipelineSteps() }),
  },
  { method: "GET", path: "/api/v1/pipelines", permission: "utilities" },
  { method: "GET", path: "/api/v1/pipelines/:id", permission: "utilities" },
  { method: "PUT", path: "/api/v1/pipelines/:id", permission: "utilities", validBody: () => ({ name: "renamed", steps: pipelineSteps() }) },
  { method: "DELETE", path: "/api/v1/pipelines/:id", permission: "utilities" },
  { method: "POST", path: "/api/v1/pipelines/:id/run", permission: "utilities", validBody: () => ({ inputs: { primary: [1, 2] } }) },
  {
    method: "POST",
    path: "/api/v1/jobs",
    permission: "utilities",
    alsoNeeds: "documents",
    validBody: () => ({
      source: { folder: "fuzz" },
      utility: "schema.clean-json",
      config: { removeNulls: true },
      output: { mode: "report" },
    }),
  },
  { method: "GET", path: "/api/v1/jobs", permission: "utilities", alsoNeeds: "documents" },
  { method: "GET", path: "/api/v1/jobs/:id", permission: "utilities", alsoNeeds: "documents" },
  { method: "POST", path: "/api/v1/jobs/:id/cancel", permission: "utilities", alsoNeeds: "documents" },
  { method: "GET", path: "/api/v1/jobs/:id/results", permission: "utilities", alsoNeeds: "documents" },
  { method: "GET", path: "/api/v1/usage", permission: null },
  {
    method: "POST",
    path: "/api/v1/admin/accounts",
    permission: "admin",
    validBody: () => ({ name: "fuzz", plan: "starter", storageLimitBytes: 1000 }),
  },
  { method: "GET", path: "/api/v1/admin/accounts/:id", permission: "admin" },
  { method: "PATCH", path: "/api/v1/admin/accounts/:id", permission: "admin", validBody: () => ({ monthlyCredits: 10 }) },
  {
    method: "POST",
    path: "/api/v1/admin/keys",
    permission: "admin",
    validBody: () => ({ accountId: "acc_none", permissions: ["documents"] }),
  },
  { method: "GET", path: "/api/v1/admin/keys", permission: "admin" },
  { method: "DELETE", path: "/api/v1/admin/keys/:id", permission: "admin" },
  { method: "GET", path: "/health", permission: undefined },
  { method: "GET", path: "/ready", permission: undefined },
  { method: "GET", path: "/openapi.json", permission: undefined },
];

export const DOCUMENT_ENDPOINTS = ENDPOINTS.filter((endpoint) => endpoint.path.startsWith("/api/v1/documents/:id"));
