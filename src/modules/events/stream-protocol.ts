/** What a live event stream writes: Server-Sent Events frames, a page at a time (stream.ts). */
import type { EventView } from "./service";

/** Events read at once (by an account's feed or a stream catching up), and written at once by a stream. */
export const STREAM_PAGE = 100;
/** The reconnection delay a stream suggests to its client (the `retry:` field, sent once). */
export const STREAM_RETRY_MS = 2000;
export const HEARTBEAT = ": heartbeat\n\n";

export const encoder = new TextEncoder();

/** One event as a Server-Sent Events frame; its data is the event as GET /api/v1/events lists it. */
export const eventFrame = (event: EventView) => `id: ${event.cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
