/** GET /openapi.json (generated from the route schemas) and GET /docs (a browsable reference). */
import { openapi } from "@elysiajs/openapi";

export const openapiDocs = () =>
  openapi({
    path: "/docs",
    specPath: "/openapi.json",
    provider: "scalar",
    documentation: {
      info: {
        title: "Kiln",
        version: "1.0.0",
        description: "JSON document storage and transformation API. Errors are application/problem+json (RFC 9457).",
      },
      components: {
        securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer kiln_…" } },
      },
      security: [{ bearerAuth: [] }],
    },
  });

const Problem: { type: "object"; description: string; required: string[]; properties: Record<string, object> } = {
  type: "object",
  description: "RFC 9457 problem details with a stable `code`",
  required: ["success", "error", "code", "type", "title", "status", "detail", "requestId"],
  properties: {
    success: { const: false }, error: { type: "string" }, code: { type: "string" }, type: { type: "string" }, title: { type: "string" },
    status: { type: "integer" }, detail: { type: "string" }, requestId: { type: "string" },
    errors: { type: "array", items: { type: "object", properties: { path: { type: "string" }, message: { type: "string" } } } },
  },
};

/** OpenAPI `responses` entries for the problem statuses a route can answer, each saying when. */
interface ProblemResponse {
  description: string;
  content: { "application/problem+json": { schema: typeof Problem } };
  headers?: { "Retry-After": { schema: { type: "integer" }; description: string } };
}

export function problemResponses(statuses: Record<number, string>): Record<string, ProblemResponse> {
  return Object.fromEntries(Object.entries(statuses).map(([status, description]) => [status, {
    description,
    content: { "application/problem+json": { schema: Problem } },
    ...(status === "429" || status === "503" ? { headers: { "Retry-After": { schema: { type: "integer" as const }, description: "seconds" } } } : {}),
  }]));
}
