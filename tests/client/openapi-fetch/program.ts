/**
 * A client of Kiln written with openapi-fetch over the types openapi-typescript generates from the live
 * GET /openapi.json. tests/client/openapi-fetch.test.ts generates ./kiln-api.ts into a folder of its own,
 * puts this file and docs/integration.md's NDJSON block (./kiln-ndjson.ts) beside it, type-checks them
 * with tsc --strict and then runs run(). Nothing but the generated types and openapi-fetch: no answer is
 * cast, so every field read here is one the document declares, and each @ts-expect-error shows a
 * mistake the types catch. (Left out of the repository's own typecheck, tsconfig.json: kiln-api.ts
 * exists only in the test's folder.)
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./kiln-api";
import { exportFolder, importLines } from "./kiln-ndjson";

type Problem = components["schemas"]["Problem"];

/** The answer's data; a problem (or no body) throws, naming the step, the status and the code. */
function need<Data>(result: { data?: Data; error?: Problem; response: Response }, step: string): Data {
  if (result.error !== undefined) throw new Error(`${step}: ${result.response.status} ${result.error.code}: ${result.error.detail}`);
  if (result.data === undefined) throw new Error(`${step}: ${result.response.status} without a body`);
  return result.data;
}

export async function run(baseUrl: string, key: string) {
  const kiln = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

  // Documents: create, get, update, list, folders
  const created = need(
    await kiln.POST("/api/v1/documents", {
      body: { name: "orders", content: { orders: [{ id: 1, total: 10, note: null }] }, folder: "shop", tags: ["q1"] },
    }),
    "create",
  );
  const id: string = created.document.id;
  const fetched = need(await kiln.GET("/api/v1/documents/{id}", { params: { path: { id } } }), "get");
  const updated = need(
    await kiln.PUT("/api/v1/documents/{id}", { params: { path: { id } }, body: { description: "first quarter", tags: ["q1", "shop"] } }),
    "update",
  );
  const listed = need(await kiln.GET("/api/v1/documents", { params: { query: { folder: "shop", limit: 10 } } }), "list");
  const folders = need(await kiln.GET("/api/v1/folders"), "folders");

  // A problem: its code is one of those the route answers
  const missing = await kiln.GET("/api/v1/documents/{id}", { params: { path: { id: "doc_missing" } } });
  // @ts-expect-error getDocument never answers that code
  if (missing.error?.code === "no_such_code") throw new Error("unreachable");

  // Content: the whole of it, a range of it (206), a range past its end (416)
  const content = need(await kiln.GET("/api/v1/documents/{id}/content", { params: { path: { id } } }), "download");
  const slice = await kiln.GET("/api/v1/documents/{id}/content", {
    params: { path: { id }, header: { Range: "bytes=0-9" } },
    parseAs: "text",
  });
  const pastEnd = await kiln.GET("/api/v1/documents/{id}/content", { params: { path: { id }, header: { Range: "bytes=100000-" } } });

  // Patches (each with its media type) and versions
  const patched = need(
    await kiln.PATCH("/api/v1/documents/{id}/content", {
      params: { path: { id } },
      body: [
        { op: "test", path: "/orders/0/id", value: 1 },
        { op: "add", path: "/orders/-", value: { id: 2, total: 5 } },
      ],
      headers: { "Content-Type": "application/json-patch+json" },
    }),
    "JSON Patch",
  );
  const merged = need(
    await kiln.PATCH("/api/v1/documents/{id}/content", {
      params: { path: { id } },
      body: { currency: "EUR" },
      headers: { "Content-Type": "application/merge-patch+json" },
    }),
    "merge patch",
  );
  const failedTest = await kiln.PATCH("/api/v1/documents/{id}/content", {
    params: { path: { id } },
    body: [{ op: "test", path: "/orders/0/id", value: 99 }],
    headers: { "Content-Type": "application/json-patch+json" },
  });
  await kiln.PATCH("/api/v1/documents/{id}/content", {
    params: { path: { id } },
    // @ts-expect-error a move names where it moves from
    body: [{ op: "move", path: "/orders" }],
    headers: { "Content-Type": "application/json-patch+json" },
  });
  const versions = need(await kiln.GET("/api/v1/documents/{id}/versions", { params: { path: { id }, query: { limit: 10 } } }), "versions");
  const firstVersion = need(
    await kiln.GET("/api/v1/documents/{id}/versions/{version}/content", { params: { path: { id, version: "1" } } }),
    "version 1",
  );
  const reverted = need(
    await kiln.POST("/api/v1/documents/{id}/versions/{version}/restore", { params: { path: { id, version: "1" } } }),
    "restore version 1",
  );

  // Utilities: the catalogue, and a run on the stored document whose output is saved (saveAs alone)
  const catalogue = need(await kiln.GET("/api/v1/utilities"), "catalogue");
  const cleaned = need(
    await kiln.POST("/api/v1/utilities/{utilityId}", {
      params: { path: { utilityId: "schema.clean-json" } },
      body: { inputs: { primaryDocumentId: id }, output: { saveAs: { name: "orders (clean)", folder: "shop" } } },
    }),
    "clean-json",
  );
  await kiln.POST("/api/v1/utilities/{utilityId}", {
    params: { path: { utilityId: "schema.clean-json" } },
    // @ts-expect-error return is a boolean
    body: { inputs: { primary: 1 }, output: { return: "no" } },
  });
  // Each utility's own path types its config by that utility's schema
  const picked = need(
    await kiln.POST("/api/v1/utilities/structure.pick-fields", {
      body: { inputs: { primary: { id: 1, secret: "s" } }, config: { paths: ["id"] } },
    }),
    "pick-fields",
  );
  const wrongConfig = await kiln.POST("/api/v1/utilities/schema.clean-json", {
    // @ts-expect-error removeNulls is a boolean
    body: { inputs: { primary: 1 }, config: { removeNulls: "yes" } },
  });

  // Pipelines: saved, run (saved output), run inline, listed, edited, deleted
  const steps = [{ utility: "schema.clean-json" }, { utility: "structure.pick-fields", config: { paths: ["id"] } }];
  const records = [
    { id: 1, x: null },
    { id: 2, x: 3 },
  ];
  const pipeline = need(await kiln.POST("/api/v1/pipelines", { body: { name: "ids", steps } }), "save pipeline").pipeline;
  const ranSaved = need(
    await kiln.POST("/api/v1/pipelines/{id}/run", {
      params: { path: { id: pipeline.id } },
      body: { inputs: { primary: records }, output: { saveAs: { name: "ids" } } },
    }),
    "run saved pipeline",
  );
  const ranInline = need(await kiln.POST("/api/v1/pipelines/run", { body: { steps, inputs: { primary: records } } }), "run pipeline");
  const pipelines = need(await kiln.GET("/api/v1/pipelines", { params: { query: { limit: 5 } } }), "list pipelines");
  const edited = need(
    await kiln.PUT("/api/v1/pipelines/{id}", { params: { path: { id: pipeline.id } }, body: { description: "ids only" } }),
    "edit pipeline",
  );
  const removed = need(await kiln.DELETE("/api/v1/pipelines/{id}", { params: { path: { id: pipeline.id } } }), "delete pipeline");

  // Export and import: NDJSON (docs/integration.md's block)
  const exported = await exportFolder(kiln, "shop");
  const imported = await importLines(
    kiln,
    exported.map((line) => ({ ...line, document: { ...line.document, folder: "imported" } })),
  );

  // A signed link, downloaded through the typed route
  const link = need(await kiln.POST("/api/v1/documents/{id}/links", { params: { path: { id } }, body: { expiresIn: 600 } }), "link");
  const linkUrl = new URL(link.url);
  const throughLink = await kiln.GET("/links/{id}", {
    params: {
      path: { id: decodeURIComponent(linkUrl.pathname.split("/").pop() ?? "") },
      query: {
        v: linkUrl.searchParams.get("v") ?? undefined,
        expires: linkUrl.searchParams.get("expires") ?? undefined,
        sig: linkUrl.searchParams.get("sig") ?? undefined,
      },
    },
    parseAs: "text",
  });

  // Delete, restore, delete again and purge
  const deleted = need(await kiln.DELETE("/api/v1/documents/{id}", { params: { path: { id } } }), "delete");
  const trash = need(await kiln.GET("/api/v1/documents", { params: { query: { deleted: "true" } } }), "trash");
  const restored = need(await kiln.POST("/api/v1/documents/{id}/restore", { params: { path: { id } } }), "restore");
  need(await kiln.DELETE("/api/v1/documents/{id}", { params: { path: { id } } }), "delete again");
  const purged = need(await kiln.POST("/api/v1/documents/{id}/purge", { params: { path: { id } } }), "purge");
  const gone = await kiln.GET("/api/v1/documents/{id}", { params: { path: { id } } });
  const usage = need(await kiln.GET("/api/v1/usage"), "usage");

  // Events and webhooks
  const feed = need(await kiln.GET("/api/v1/events", { params: { query: { type: "document.created", limit: 100 } } }), "events");
  // an event's type says the shape of its data
  const createdNames = feed.events.flatMap((event) => {
    if (event.type !== "document.created") return [];
    // @ts-expect-error a document event carries a document, not a pipeline
    if (event.data.pipeline) throw new Error("unreachable");
    return [event.data.document.name];
  });
  const hook = need(
    await kiln.POST("/api/v1/webhooks", { body: { url: "http://127.0.0.1:9/hook", eventTypes: ["document.*"], enabled: false } }),
    "create webhook",
  );
  const hooks = need(await kiln.GET("/api/v1/webhooks"), "list webhooks");
  const hookDeliveries = need(
    await kiln.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: hook.webhook.id } } }),
    "webhook deliveries",
  );
  const hookRemoved = need(await kiln.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: hook.webhook.id } } }), "delete webhook");

  return {
    id,
    created: { name: created.document.name, folder: created.document.folder, tags: created.document.tags },
    fetchedVersion: fetched.document.version,
    updated: { description: updated.document.description, tags: updated.document.tags },
    listed: listed.documents.map((document) => document.id),
    folders: folders.folders.map((folder) => folder.path),
    missing: { status: missing.response.status, code: missing.error?.code },
    content,
    slice: { status: slice.response.status, contentRange: slice.response.headers.get("content-range"), text: slice.data },
    pastEnd: {
      status: pastEnd.response.status,
      code: pastEnd.error?.code,
      contentRange: pastEnd.response.headers.get("content-range"),
    },
    patchedVersion: patched.document.version,
    mergedVersion: merged.document.version,
    failedTest: { status: failedTest.response.status, code: failedTest.error?.code },
    versions: versions.versions.map((version) => version.version),
    firstVersion,
    revertedVersion: reverted.document.version,
    utilities: catalogue.utilities.length,
    picked: picked.output,
    wrongConfig: { status: wrongConfig.response.status, code: wrongConfig.error?.code },
    cleaned: { output: cleaned.output, saved: cleaned.document?.name, folder: cleaned.document?.folder, credits: cleaned.creditsUsed },
    ranSaved: { output: ranSaved.output, saved: ranSaved.document?.name, credits: ranSaved.creditsUsed },
    ranInline: { output: ranInline.output, steps: ranInline.steps.map((step) => step.utility) },
    pipelines: pipelines.pipelines.map((entry) => entry.id),
    pipelineId: pipeline.id,
    edited: edited.pipeline.description,
    removed: removed.deleted,
    exported: exported.map((line) => ({ name: line.document.name, content: line.content, contentText: line.contentText })),
    imported,
    throughLink: { status: throughLink.response.status, text: throughLink.data },
    deleted: deleted.deleted,
    trash: trash.documents.map((document) => document.id),
    restored: restored.document.id,
    purged: purged.permanent,
    gone: { status: gone.response.status, code: gone.error?.code },
    credits: usage.credits.used,
    events: feed.events.map((event) => event.type),
    createdNames,
    webhook: { secret: hook.secret.startsWith("whsec_"), listed: hooks.webhooks.map((entry) => entry.id).includes(hook.webhook.id) },
    webhookDeliveries: hookDeliveries.deliveries.length,
    webhookRemoved: hookRemoved.deleted,
  };
}
