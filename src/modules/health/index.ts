import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import type { Database } from "../../db/client";
import { operation } from "../../http/openapi";
import type { ContentStore } from "../../storage/content-store";

const notReady = (detail: string) => httpError(ERRORS.not_ready, detail, { headers: { "Retry-After": "5" } });

export const healthModule = (deps: {
  database: Database;
  contentStore: ContentStore;
  draining?: () => boolean;
  /** /health fails once queries have waited this long for a pool connection with none coming free */
  stalledHealthMs: number;
}) =>
  new Elysia({ name: "kiln.health", detail: { tags: ["Operations"] } })
    .get(
      "/health",
      () => {
        // a wedged pool serves no request again by itself: a liveness probe that sees this restarts the process
        const stalledMs = deps.database.stalledForMs();
        if (stalledMs > deps.stalledHealthMs)
          throw httpError(
            ERRORS.database_pool_stalled,
            `No database connection came free for ${Math.round(stalledMs / 1000)} s while queries waited for one`,
          );
        return { success: true as const, status: "ok" };
      },
      {
        response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
        detail: operation({
          operationId: "getHealth",
          summary: "The process serves",
          errors: {
            503: problems`${ERRORS.database_pool_stalled}: queries have waited longer than DATABASE_STALLED_HEALTH_MS for a database connection with none coming free`,
          },
        }),
      },
    )
    .get(
      "/ready",
      async () => {
        if (deps.draining?.()) throw httpError(ERRORS.draining, "The node is shutting down; send requests to another node");
        const [database, store] = await Promise.all([
          deps.database.ping(),
          deps.contentStore.probe().then(
            () => true,
            () => false,
          ),
        ]);
        if (!database) throw notReady("The database does not answer");
        if (!store) throw notReady("The content store does not answer");
        return { success: true as const, status: "ready" };
      },
      {
        response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
        detail: operation({
          operationId: "getReadiness",
          summary: "The database and the content store answer, and the node is not shutting down",
          errors: {
            503: problems`${ERRORS.not_ready}: the database or the content store does not answer; ${ERRORS.draining}: the node is shutting down (SIGTERM)`,
          },
        }),
      },
    );
