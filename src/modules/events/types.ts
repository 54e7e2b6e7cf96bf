/**
 * The event types of each family; each family has one shape of `data` (model.ts). Apart from service.ts
 * so that the feed's row type (statements.ts, EventRecord) names them without an import cycle.
 */
export const DOCUMENT_EVENT_TYPES = [
  "document.created",
  "document.updated",
  "document.content_replaced",
  "document.deleted",
  "document.restored",
  "document.purged",
] as const;
export const PIPELINE_EVENT_TYPES = ["pipeline.created", "pipeline.updated", "pipeline.deleted"] as const;
export const WEBHOOK_EVENT_TYPES = ["webhook.disabled"] as const;
export const EVENT_TYPES = [...DOCUMENT_EVENT_TYPES, ...PIPELINE_EVENT_TYPES, ...WEBHOOK_EVENT_TYPES] as const;
export type EventType = (typeof EVENT_TYPES)[number];
