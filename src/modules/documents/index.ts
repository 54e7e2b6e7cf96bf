/**
 * Documents API (permission `documents`), as docs/api.md describes it: one route group per part of it
 * (routes/), their schemas in model.ts, the rules in the services.
 */
import { Elysia } from "elysia";
import type { DocumentRoutesDeps } from "./routes/common";
import { contentRoutes } from "./routes/content";
import { documentRoutes, folderRoutes } from "./routes/documents";
import { transferRoutes } from "./routes/transfer";
import { trashRoutes } from "./routes/trash";
import { versionRoutes } from "./routes/versions";

/** The import route as Elysia names it: its body is streamed, never buffered (see app.ts's body parser). */
export const IMPORT_ROUTE = "/api/v1/import";

/**
 * Routes whose bodies the handlers read as raw bytes: content is stored as received (a patch's values
 * too), and a metadata update is parsed only once its document was found (404 before 400).
 */
export const DOCUMENT_RAW_ROUTES = ["/api/v1/documents/:id", "/api/v1/documents/:id/content"] as const;

/** The groups in the order the OpenAPI document lists their paths. */
export const documentsModule = (deps: DocumentRoutesDeps) =>
  new Elysia({ name: "kiln.documents" })
    .use(documentRoutes(deps))
    .use(contentRoutes(deps))
    .use(versionRoutes(deps))
    .use(trashRoutes(deps))
    .use(transferRoutes(deps))
    .use(folderRoutes(deps));
