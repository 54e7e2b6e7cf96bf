/**
 * GET /openapi.json, generated from the routes themselves (./document.ts), GET /docs, a browsable
 * reference whose viewer (Scalar's standalone bundle) is served by Kiln from node_modules, so it works
 * offline, and GET /, which points to both. Routes describe themselves with operation() (./operation.ts).
 */

import { resolve } from "node:path";
import { type AnyElysia, Elysia, t } from "elysia";
import { staticAsset } from "../static-asset";
import { buildOpenApiDocument, type DocumentInfo, type RouteLike } from "./document";
import { operation } from "./operation";

export type { OperationVariant } from "./document";
export { NdjsonLines, operation } from "./operation";

const VIEWER = resolve(import.meta.dir, "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js");
/** 4.35 MB of JavaScript: sent br- or gzip-compressed (about 1 MB), each form made once and kept in memory. */
const viewerScript = staticAsset(VIEWER, { contentType: "text/javascript; charset=utf-8", cacheControl: "public, max-age=86400" });

/** An icon in the page itself: without one the browser asks for /favicon.ico, a 404 in the log. */
const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#b4532a"/><path d="M4 3h2v4l4-4h3L8 8l5 5h-3L6 9v4H4z" fill="#fff"/></svg>',
)}`;

/**
 * The reference page. `authentication` preselects the bearer scheme in the request panel (Scalar shows
 * "No authentication selected" otherwise, since the document sets security per operation only).
 */
const docsPage = (title: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="${ICON}">
  <title>${title}</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/standalone.js"></script>
  <script>
    Scalar.createApiReference("#app", { url: "/openapi.json", withDefaultFonts: false, hideClientButton: true, telemetry: false, showToolbar: "never", showDeveloperTools: "never", mcp: { disabled: true }, agent: { disabled: true }, authentication: { preferredSecurityScheme: "bearerAuth" } });
  </script>
</body>
</html>
`;

/**
 * GET /: where to go from here, as a small JSON object of links (as API roots such as GitHub's answer),
 * not a redirect: `curl localhost:3000` then shows the way instead of an empty 302, and a browser
 * shows the links.
 */
const ROOT = {
  success: true as const,
  name: "Kiln",
  description: "JSON document storage and transformation API",
  links: { docs: "/docs", openapi: "/openapi.json", health: "/health", ready: "/ready", api: "/api/v1" },
};
const RootResponse = t.Object(
  {
    success: t.Literal(true),
    name: t.String(),
    description: t.String(),
    links: t.Object(
      {
        docs: t.String({ description: "the browsable API reference" }),
        openapi: t.String({ description: "the OpenAPI 3.1 document" }),
        health: t.String({ description: "whether the process serves" }),
        ready: t.String({ description: "whether the node is ready for traffic" }),
        api: t.String({ description: "the base path of the API (every route under it needs a key)" }),
      },
      { description: "paths on this server" },
    ),
  },
  { title: "ServiceIndex" },
);

const INFO: DocumentInfo = {
  title: "Kiln",
  version: "1.0.0",
  description: "JSON document storage and transformation API. Errors are application/problem+json (RFC 9457) with a stable `code`.",
};

/**
 * The reference routes. describe(app) names the app whose routes the document lists; it is read on each
 * request (cached while the route count stays the same), so routes added after this plugin are covered.
 */
export function openapiDocs(options: Pick<DocumentInfo, "webhooks" | "variants"> = {}) {
  const info: DocumentInfo = { ...INFO, ...options };
  let routesOf: () => readonly RouteLike[] = () => [];
  let cached: { count: number; text: string } | undefined;
  const plugin = new Elysia({ name: "kiln.openapi", detail: { tags: ["Operations"] } })
    .get("/", () => ROOT, {
      response: { 200: RootResponse },
      detail: operation({ operationId: "getServiceIndex", summary: "Links to the reference, the OpenAPI document and the health checks" }),
    })
    .get(
      "/openapi.json",
      () => {
        const routes = routesOf();
        if (cached?.count !== routes.length) cached = { count: routes.length, text: JSON.stringify(buildOpenApiDocument(routes, info)) };
        return new Response(cached.text, { headers: { "Content-Type": "application/json" } });
      },
      {
        detail: operation({
          operationId: "getOpenApiDocument",
          summary: "This OpenAPI 3.1 document",
          responses: { 200: { description: "The document", content: { "application/json": { type: "object" } } } },
        }),
      },
    )
    .get("/docs", () => new Response(docsPage("Kiln API reference"), { headers: { "Content-Type": "text/html; charset=utf-8" } }), {
      detail: operation({
        operationId: "getApiReference",
        summary: "Browsable API reference (works offline)",
        responses: { 200: { description: "An HTML page", content: { "text/html": { type: "string" } } } },
      }),
    })
    .get("/docs/standalone.js", ({ request }) => viewerScript.answer(request), {
      detail: operation({
        operationId: "getApiReferenceViewer",
        summary: "The reference viewer's script (Scalar, served by this server)",
        description: "Compressed (br or gzip) as Accept-Encoding asks, with an ETag per form; If-None-Match gives 304.",
        responses: { 200: { description: "JavaScript", content: { "text/javascript": { type: "string" } } } },
        headers: { 200: ["ETag"] },
        conditional: ["If-None-Match"],
        notModified: true,
      }),
    });
  return {
    plugin,
    describe(app: AnyElysia) {
      routesOf = () => app.routes as unknown as RouteLike[];
    },
  };
}
