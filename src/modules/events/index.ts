/**
 * The events API: what changed in the caller's account, oldest first, resumable by cursor, as pages or
 * as a live stream (Server-Sent Events, stream.ts). Any valid key may read it; it sees the families its
 * permissions cover (documents → document.*, utilities → pipeline.*).
 */

import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { validationError } from "../../core/errors";
import { folderFilter } from "../../core/metadata";
import type { Db } from "../../db/client";
import { operation } from "../../http/openapi";
import { type AuthPlugin, type Principal, requirePrincipal } from "../auth";
import { LIMIT_PARAMETER } from "../documents/model";
import { readableFamilies } from "./catalogue";
import {
  EventsPage,
  EventsQuery,
  EventsStreamQuery,
  type EventView,
  LAST_EVENT_ID_PARAMETER,
  STREAM_TIMEOUT_MAX_SECONDS,
  TIMEOUT_PARAMETER,
} from "./model";
import {
  decodeEventCursor,
  EVENTS_LIMIT_DEFAULT,
  EVENTS_LIMIT_MAX,
  type EventFilter,
  encodeEventCursor,
  parseEventTypes,
  readEvents,
} from "./service";
import type { EventStreams } from "./stream";
import { STREAM_RETRY_MS } from "./stream-protocol";

/**
 * The query's filters, checked: unknown types and invalid folders are 400s naming the parameter. A folder
 * includes its subfolders unless recursive=false: the feed and webhooks have always matched a subtree.
 */
export function eventFilterOf(query: { type?: string; folder?: string; recursive?: "true" | "false" }): EventFilter {
  return { types: parseEventTypes(query.type), folder: folderFilter(query.folder, query.recursive !== "false") };
}

interface StreamContext {
  principal: Principal | undefined;
  query: { after?: string; type?: string; folder?: string; recursive?: "true" | "false"; timeout?: number };
  request: Request;
}

/** GET (and HEAD) /api/v1/events/stream: checks everything, then answers with a live stream (stream.ts). */
const streamEvents =
  (streams: EventStreams) =>
  ({ principal, query, request }: StreamContext): Response => {
    const { accountId, keyId, permissions } = requirePrincipal(principal);
    const lastEventId = request.headers.get("last-event-id");
    const after = lastEventId ? decodeEventCursor(lastEventId, "/Last-Event-ID") : decodeEventCursor(query.after);
    const filter = eventFilterOf(query);
    if (query.timeout !== undefined && !(query.timeout >= 1 && query.timeout <= STREAM_TIMEOUT_MAX_SECONDS)) {
      throw validationError([{ path: "/timeout", message: `must be a whole number of seconds from 1 to ${STREAM_TIMEOUT_MAX_SECONDS}` }]);
    }
    const headers = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" };
    if (request.method === "HEAD") return new Response(null, { headers });
    const body = streams.open({
      accountId,
      keyId,
      families: readableFamilies(permissions),
      filter,
      after,
      signal: request.signal,
      timeoutMs: query.timeout === undefined ? undefined : query.timeout * 1000,
    });
    // never compressed (server/compression.ts compresses JSON only); X-Accel-Buffering: no asks nginx not to buffer it
    return new Response(body, { headers });
  };

export const eventsModule = (deps: { db: Db; auth: AuthPlugin; streams: EventStreams }) =>
  new Elysia({ name: "kiln.events", detail: { tags: ["Events"] } })
    .use(deps.auth)
    .get(
      "/api/v1/events",
      async ({ principal, query }) => {
        const { accountId, permissions } = requirePrincipal(principal);
        const limit = query.limit === undefined ? EVENTS_LIMIT_DEFAULT : Number(query.limit);
        if (!(Number.isInteger(limit) && limit >= 1 && limit <= EVENTS_LIMIT_MAX)) {
          throw validationError([{ path: "/limit", message: `must be an integer from 1 to ${EVENTS_LIMIT_MAX}` }]);
        }
        const after = decodeEventCursor(query.after);
        const events = await readEvents(deps.db, accountId, readableFamilies(permissions), eventFilterOf(query), after, limit);
        return {
          success: true as const,
          // the rows' data is JSON the database built (document fields, a stored payload): EventView documents its shape per family
          events: events as Static<typeof EventView>[],
          nextCursor: events.at(-1)?.cursor ?? encodeEventCursor(after),
          hasMore: events.length === limit,
        };
      },
      {
        query: EventsQuery,
        response: { 200: EventsPage },
        detail: {
          ...operation({
            operationId: "listEvents",
            summary: "Events of the caller's account, oldest first, after a cursor",
            description:
              "A consumer that passes back nextCursor never misses an event: events are listed in the order their transactions committed in the account, and an event is listed only once every earlier write of the account has committed or rolled back, so events never appear behind a cursor. Kept for EVENT_RETENTION_MS (30 days by default).",
            errors: { 400: problems`${ERRORS.validation_failed} (type, folder or limit), ${ERRORS.invalid_cursor}` },
          }),
          parameters: [
            { ...LIMIT_PARAMETER, schema: { type: "integer", minimum: 1, maximum: EVENTS_LIMIT_MAX, default: EVENTS_LIMIT_DEFAULT } },
          ],
        },
      },
    )
    .get("/api/v1/events/stream", streamEvents(deps.streams), {
      query: EventsStreamQuery,
      detail: {
        ...operation({
          operationId: "streamEvents",
          summary: "Events of the caller's account as they happen (Server-Sent Events)",
          description: `The feed of listEvents, live: each event as \`id: <cursor>\`, \`event: <type>\`, \`data: <the event as listEvents shows it>\` and a blank line, oldest first; the same filters and permission families. It starts after Last-Event-ID (or \`after\`; absent: the oldest kept event), so a client that reconnects with the id of the last event it got misses nothing and gets nothing twice. The stream opens with \`retry: ${STREAM_RETRY_MS}\`, sends \`: heartbeat\` after EVENTS_HEARTBEAT_MS (15 s) without an event, and ends when the node shuts down, when the key is revoked or expires, after \`timeout\`, or when the client takes nothing for two heartbeat intervals: reconnect with Last-Event-ID. A key may hold EVENT_STREAMS_PER_KEY (20) streams open and an account EVENT_STREAMS_PER_ACCOUNT (100), on each node; past them 429 too_many_streams with Retry-After.`,
          errors: {
            400: problems`${ERRORS.validation_failed} (type, folder, timeout), ${ERRORS.invalid_cursor} (after or Last-Event-ID)`,
            429: problems`${ERRORS.too_many_streams}: the key (EVENT_STREAMS_PER_KEY) or the account (EVENT_STREAMS_PER_ACCOUNT) has its most streams open on this node`,
            503: problems`${ERRORS.too_many_streams_on_node}: this node serves its most streams (EVENT_STREAMS_PER_PROCESS)`,
          },
          headers: { 429: ["Retry-After"] },
          responses: {
            200: {
              description: "An endless text/event-stream of events and heartbeats",
              content: {
                "text/event-stream": {
                  type: "string",
                  description:
                    "Server-Sent Events: `retry: <ms>` once, then for each event `id: <cursor>`, `event: <type>`, `data: <Event as JSON>` and a blank line; `: heartbeat` comments between them (#/components/schemas/Event)",
                },
              },
            },
          },
        }),
        parameters: [TIMEOUT_PARAMETER, LAST_EVENT_ID_PARAMETER],
      },
    })
    // Elysia answers a HEAD by running the GET and reading its body to the end to measure it: never, here
    .head("/api/v1/events/stream", streamEvents(deps.streams), { query: EventsStreamQuery, detail: { hide: true } });
