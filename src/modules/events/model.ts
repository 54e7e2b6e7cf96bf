import type { TSchema } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ListQuery } from "../documents/model";
import { EVENT_CATALOGUE, EVENT_TYPES, type EventFamily } from "./catalogue";

export const EventsQuery = t.Object(
  {
    after: t.Optional(
      t.String({ description: "the cursor of the last event seen (nextCursor, or an event's cursor); absent = from the oldest kept" }),
    ),
    type: t.Optional(
      t.String({ description: `comma-separated event types (${EVENT_TYPES.join(", ")}) or families (document.*, pipeline.*)` }),
    ),
    folder: t.Optional(t.String({ description: "only events of documents in this folder or, unless recursive=false, below it" })),
    recursive: t.Optional(
      t.Union([t.Literal("true"), t.Literal("false")], {
        description:
          "with folder: true (the default here) includes its subfolders at any depth (folder=a matches a and a/b, never ab); false only the folder itself",
      }),
    ),
    limit: ListQuery.properties.limit,
  },
  { additionalProperties: false },
);

/** The event fields, with `type` one of a family's types and `data` that family's shape. */
const eventOf = <Types extends readonly [string, ...string[]], Data extends TSchema>(types: Types, data: Data, title: string) =>
  t.Object(
    {
      id: t.String({ description: "evt_…, the same on every delivery of this event" }),
      type: t.UnionEnum(types),
      createdAt: Type.Integer({
        description: "epoch ms: when the change was made (for a create or new content, the document's updatedAt)",
      }),
      cursor: t.String({ description: "resume after this event: pass it as `after` (or as Last-Event-ID on the stream)" }),
      data,
    },
    { title },
  );

/** A family's event schema, from its catalogue entry. */
const familyEvent = <Family extends EventFamily>(family: Family) =>
  eventOf(EVENT_CATALOGUE[family].types, EVENT_CATALOGUE[family].data, EVENT_CATALOGUE[family].title);

/**
 * The event schema of each family: the feed's items and the webhooks' bodies (webhooks/model.ts) are these.
 * Listed by name for the route types; the compiler refuses a family of the catalogue missing here.
 */
export const EVENT_FAMILY_SCHEMAS = {
  document: familyEvent("document"),
  pipeline: familyEvent("pipeline"),
  schema: familyEvent("schema"),
  webhook: familyEvent("webhook"),
  job: familyEvent("job"),
  index: familyEvent("index"),
} satisfies Record<EventFamily, unknown>;

/** An event: its `type` says its family, and so the shape of its `data`. */
export const EventView = t.Union(
  [
    EVENT_FAMILY_SCHEMAS.document,
    EVENT_FAMILY_SCHEMAS.pipeline,
    EVENT_FAMILY_SCHEMAS.schema,
    EVENT_FAMILY_SCHEMAS.webhook,
    EVENT_FAMILY_SCHEMAS.job,
    EVENT_FAMILY_SCHEMAS.index,
  ],
  { title: "Event" },
);

export const EventsPage = t.Object(
  {
    success: t.Literal(true),
    events: t.Array(EventView),
    nextCursor: t.String({ description: "pass as `after` for the next page; the same cursor again when nothing newer is visible yet" }),
    hasMore: t.Boolean({ description: "true when the page was full: more events may be ready at once" }),
  },
  { title: "EventsPage" },
);

/** Seconds, checked as the text they arrive as (1 to 5 digits, else 400 naming /timeout), then 1 to 86400 by the route. */
const TimeoutSeconds = t
  .Transform(t.String({ pattern: "^[0-9]{1,5}$", error: "timeout: must be a whole number of seconds from 1 to 86400" }))
  .Decode((text) => Number(text))
  .Encode((seconds) => String(seconds));

export const STREAM_TIMEOUT_MAX_SECONDS = 86_400;

/** `timeout` as the OpenAPI document declares it (it replaces the text schema the route validates). */
export const TIMEOUT_PARAMETER = {
  name: "timeout",
  in: "query",
  required: false,
  description: "end the stream after this many seconds; absent: it stays open until the client or the server ends it",
  schema: { type: "integer", minimum: 1, maximum: STREAM_TIMEOUT_MAX_SECONDS },
} as const;

/** Last-Event-ID, which an EventSource sends by itself when it reconnects. */
export const LAST_EVENT_ID_PARAMETER = {
  name: "Last-Event-ID",
  in: "header",
  required: false,
  description: "the id (cursor) of the last event received: the stream resumes after it; it takes precedence over `after`",
  schema: { type: "string" },
} as const;

export const EventsStreamQuery = t.Object(
  {
    after: t.Optional(
      t.String({
        description: "the cursor to start after (an event's cursor, or a page's nextCursor); a Last-Event-ID header takes precedence",
      }),
    ),
    type: EventsQuery.properties.type,
    folder: EventsQuery.properties.folder,
    recursive: EventsQuery.properties.recursive,
    timeout: t.Optional(TimeoutSeconds),
  },
  { additionalProperties: false },
);
