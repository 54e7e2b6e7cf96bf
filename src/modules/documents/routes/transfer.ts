/** An account's documents as NDJSON: export them, import them. */
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../../core/error-codes";
import { httpError } from "../../../core/errors";
import { NdjsonLines, operation } from "../../../http/openapi";
import { requirePrincipal } from "../../auth/index";
import { stringHeaders } from "../download";
import { ExportLine, ExportQuery, ImportLine, ImportResult } from "../model";
import { exportDocuments, importDocuments } from "../transfer";
import type { DocumentRoutesDeps } from "./common";

export const transferRoutes = (deps: DocumentRoutesDeps) =>
  new Elysia({ prefix: "/api/v1", detail: { tags: ["Documents"] } })
    .use(deps.auth)
    .get(
      "/export",
      ({ principal, query, set }) => {
        const stream = exportDocuments(deps, requirePrincipal(principal).accountId, {
          folder: query.folder,
          recursive: query.recursive === "true",
          deleted: query.deleted === "true",
        });
        return new Response(stream, {
          headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" },
        });
      },
      {
        query: ExportQuery,
        detail: operation({
          operationId: "exportDocuments",
          summary: "Export documents as NDJSON",
          description:
            'One line per document, oldest first: {"document": {metadata}, "content": <the stored JSON text, byte for byte>} (content with line breaks comes as contentText). `folder` and `recursive` select as in the document list. Streamed: memory stays flat whatever the number of documents.',
          responses: {
            200: {
              description: "One line per document",
              content: { "application/x-ndjson": new NdjsonLines(ExportLine, "one line per document, oldest first") },
            },
          },
        }),
      },
    )
    .post(
      "/import",
      ({ principal, request, set }) => {
        const accountId = requirePrincipal(principal).accountId;
        const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
        if (type !== "application/x-ndjson")
          throw httpError(ERRORS.unsupported_media_type, "The import body must be NDJSON: Content-Type: application/x-ndjson");
        const results = importDocuments(deps, accountId, request.body, deps.importLineMaxBytes);
        return new Response(results, {
          headers: { ...stringHeaders(set.headers as Record<string, string>), "Content-Type": "application/x-ndjson" },
        });
      },
      {
        detail: operation({
          operationId: "importDocuments",
          summary: "Import documents from NDJSON",
          description:
            'The export\'s line format; of document, only name, description, tags and folder are read. Each line is created on its own (quotas per line) and answered by one result line, streamed as it is stored: {"line": n, "id"} or {"line": n, "error": {code, detail}}. Blank lines are skipped.',
          requestBody: {
            description: "One document per line (Content-Type: application/x-ndjson)",
            content: { "application/x-ndjson": new NdjsonLines(ImportLine, "one document per line; blank lines are skipped") },
          },
          responses: {
            200: {
              description: "One result per input line",
              content: { "application/x-ndjson": new NdjsonLines(ImportResult, "one result per non-blank input line, in order") },
            },
          },
          errors: { 415: problems`${ERRORS.unsupported_media_type}: the body is not application/x-ndjson (or has a Content-Encoding)` },
        }),
      },
    );
