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
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer kiln_…" },
          metricsToken: { type: "http", scheme: "bearer", description: "GET /metrics only: Authorization: Bearer <METRICS_TOKEN>" },
        },
      },
      security: [{ bearerAuth: [] }],
    },
  });
