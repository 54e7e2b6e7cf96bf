import { Elysia, t } from "elysia";
import type { Database } from "../../db/client";
import { HttpError } from "../../http/errors";
import { operation } from "../../http/openapi";

export const healthModule = (deps: { database: Database; draining?: () => boolean }) =>
  new Elysia({ name: "kiln.health", detail: { tags: ["Operations"] } })
    .get("/health", () => ({ success: true as const, status: "ok" }), {
      response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
      detail: operation({ operationId: "getHealth", summary: "The process serves" }),
    })
    .get("/ready", async () => {
      if (deps.draining?.()) throw new HttpError(503, "draining", "The node is shutting down; send requests to another node");
      if (!(await deps.database.ping())) throw new HttpError(503, "not_ready", "The database does not answer");
      return { success: true as const, status: "ready" };
    }, {
      response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
      detail: operation({ operationId: "getReadiness", summary: "The database answers and the node is not shutting down", errors: { 503: "not_ready: the database does not answer; draining: the node is shutting down (SIGTERM)" } }),
    });
