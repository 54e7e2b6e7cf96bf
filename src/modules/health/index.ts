import { Elysia, t } from "elysia";
import type { Database } from "../../db/client";
import { HttpError } from "../../http/errors";
import type { ContentStore } from "../../storage/content-store";

export const healthModule = (deps: { database: Database; contentStore: ContentStore }) =>
  new Elysia({ name: "kiln.health", detail: { tags: ["Operations"] } })
    .get("/health", () => ({ success: true as const, status: "ok" }), {
      response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
      detail: { summary: "The process serves" },
    })
    .get("/ready", async () => {
      const [database, store] = await Promise.all([deps.database.ping(), deps.contentStore.probe().then(() => true, () => false)]);
      if (!database) throw new HttpError(503, "not_ready", "The database does not answer");
      if (!store) throw new HttpError(503, "not_ready", "The content store does not answer");
      return { success: true as const, status: "ready" };
    }, {
      response: { 200: t.Object({ success: t.Literal(true), status: t.String() }) },
      detail: { summary: "The database and the content store answer (503 otherwise)" },
    });
