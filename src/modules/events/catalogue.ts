/**
 * Every event Kiln records, in one place: each family's types, the permission a key needs to read them
 * (the events API and the stream) or to route them to a webhook, and the shape of their `data`. The events
 * API (service.ts), the webhooks (webhooks/service.ts) and the OpenAPI schemas (model.ts, webhooks/model.ts)
 * read it; none lists a type or a family of its own.
 *
 * Adding an event: its type here (a new family: an entry, with its permission and its data's schema);
 * its writer, which records it through kiln_record_event (src/db/sql/functions) in the transaction of the
 * change; and docs/events.md.
 */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import type { Permission } from "../../core/plans";
import { DocumentView } from "../documents/model";
import { JobView } from "../jobs/model";

/** A document event's `data`: the document as the documents API shows it, as the change left it. */
const DocumentEventData = t.Object(
  {
    document: t.Composite(
      [
        DocumentView,
        t.Object({
          deletedAt: t.Optional(Type.Integer({ description: "epoch ms: while it is in the trash, when it was deleted" })),
          purgeAt: t.Optional(Type.Integer({ description: "epoch ms: while it is in the trash, when the sweeper purges it" })),
        }),
      ],
      { title: "EventDocument", description: "its metadata as the API shows it (never its content); for a purge, as it was" },
    ),
  },
  { title: "DocumentEventData" },
);

const PipelineEventData = t.Object(
  {
    pipeline: t.Object({
      id: t.String({ description: "pip_…" }),
      name: t.String(),
      description: t.Optional(t.String({ description: "present when set" })),
      createdAt: Type.Integer({ description: "epoch ms" }),
      updatedAt: Type.Integer({ description: "epoch ms" }),
    }),
  },
  { title: "PipelineEventData" },
);

const WebhookEventData = t.Object(
  {
    webhook: t.Object({
      id: t.String({ description: "whk_…" }),
      url: t.String(),
      failingSince: Type.Integer({ description: "epoch ms: the first failed attempt of the failing run" }),
      disabledAt: Type.Integer({ description: "epoch ms" }),
      reason: t.String(),
    }),
  },
  { title: "WebhookEventData" },
);

const JobEventData = t.Object({ job: JobView }, { title: "JobEventData" });

const SchemaEventData = t.Object(
  {
    document: t.Object({
      id: t.String({ description: "doc_…" }),
      name: t.String(),
      folder: t.Union([t.String(), t.Null()]),
      version: Type.Integer({ description: "the content version that was stored" }),
    }),
    schema: t.Object({ id: t.String({ description: "sch_…" }), version: Type.Integer() }),
    warningCount: Type.Integer({ description: "how many errors the write's answer listed" }),
    warnings: t.Array(t.Object({ path: t.String(), keyword: t.String(), schemaPath: t.String(), message: t.String() }), {
      description: "the first 20 of them",
    }),
  },
  { title: "SchemaEventData" },
);

const IndexEventData = t.Object(
  {
    index: t.Object({
      id: t.String({ description: "idx_…" }),
      folder: t.String(),
      name: t.String(),
      fields: t.Array(t.Object({ path: t.String(), order: t.String() })),
      unique: t.Boolean(),
      state: t.String({ description: "ready or failed" }),
      reason: t.Optional(t.String({ description: "why it failed" })),
      progress: t.Object({ processed: Type.Integer(), total: Type.Integer() }),
      createdAt: Type.Integer({ description: "epoch ms" }),
    }),
  },
  { title: "IndexEventData" },
);

/**
 * The families, in the order the API lists them. `title`: the OpenAPI name of the family's event schema.
 * Who writes each: document.created and document.content_replaced by kiln_create and kiln_new_version, the
 * other document events by kiln_document_events (the documents trigger), pipeline events by
 * kiln_pipeline_events (the pipelines trigger), webhook.disabled by the delivery loop (INSERT_EVENT), schema.violated
 * (a write a warn-mode schema let through) by the schemas module once the write committed (INSERT_SCHEMA_EVENT), job
 * events by the job runner and a cancel in the transaction that finishes the job (jobs/statements.ts RECORD_EVENT),
 * index events by the index's creation (an empty folder) or its build's end (RECORD_INDEX_EVENT, modules/query).
 */
export const EVENT_CATALOGUE = {
  document: {
    permission: "documents",
    types: [
      "document.created",
      "document.updated",
      "document.content_replaced",
      "document.deleted",
      "document.restored",
      "document.purged",
    ],
    data: DocumentEventData,
    title: "DocumentEvent",
  },
  pipeline: {
    permission: "utilities",
    types: ["pipeline.created", "pipeline.updated", "pipeline.deleted"],
    data: PipelineEventData,
    title: "PipelineEvent",
  },
  schema: {
    permission: "documents",
    types: ["schema.violated"],
    data: SchemaEventData,
    title: "SchemaEvent",
  },
  webhook: {
    permission: "webhooks",
    types: ["webhook.disabled"],
    data: WebhookEventData,
    title: "WebhookEvent",
  },
  job: {
    permission: "documents",
    types: ["job.succeeded", "job.failed", "job.cancelled"],
    data: JobEventData,
    title: "JobEvent",
  },
  index: {
    permission: "documents",
    types: ["index.ready", "index.failed"],
    data: IndexEventData,
    title: "IndexEvent",
  },
} as const satisfies Record<string, { permission: Permission; types: readonly [string, ...string[]]; data: unknown; title: string }>;

export type EventFamily = keyof typeof EVENT_CATALOGUE;
export type EventType = (typeof EVENT_CATALOGUE)[EventFamily]["types"][number];

/** Every family: what a read shared by streams of keys with different permissions reads (stream.ts). */
export const EVENT_FAMILIES = Object.keys(EVENT_CATALOGUE) as EventFamily[];

export const EVENT_TYPES: readonly EventType[] = EVENT_FAMILIES.flatMap((family) => EVENT_CATALOGUE[family].types);

export const isEventFamily = (family: string): family is EventFamily => Object.hasOwn(EVENT_CATALOGUE, family);

/** The permission a key needs to read a family's events, or to have a webhook receive them (undefined: no such family). */
export const familyPermission = (family: string): Permission | undefined =>
  isEventFamily(family) ? EVENT_CATALOGUE[family].permission : undefined;

/** The families of events a key with these permissions may read. */
export const readableFamilies = (permissions: ReadonlySet<Permission>): EventFamily[] =>
  EVENT_FAMILIES.filter((family) => permissions.has(EVENT_CATALOGUE[family].permission));
