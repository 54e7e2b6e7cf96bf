import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ListQuery } from "../documents/model";
import { EVENT_TYPES } from "./service";

export const EventsQuery = t.Object(
  {
    after: t.Optional(
      t.String({ description: "the cursor of the last event seen (nextCursor, or an event's cursor); absent = from the oldest kept" }),
    ),
    type: t.Optional(
      t.String({ description: `comma-separated event types (${EVENT_TYPES.join(", ")}) or families (document.*, pipeline.*)` }),
    ),
    folder: t.Optional(t.String({ description: "only events of documents in this folder or below it" })),
    limit: ListQuery.properties.limit,
  },
  { additionalProperties: false },
);

export const EventView = t.Object(
  {
    id: t.String({ description: "evt_…, the same on every delivery of this event" }),
    type: t.UnionEnum(EVENT_TYPES),
    createdAt: Type.Integer({ description: "epoch ms" }),
    cursor: t.String({ description: "resume after this event: pass it as `after` (or as Last-Event-ID on the stream)" }),
    data: t.Record(t.String(), t.Unknown(), {
      description: "document events: { document } (its metadata as the API shows it, never its content); pipeline events: { pipeline }",
    }),
  },
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
