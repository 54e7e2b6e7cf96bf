/**
 * The live feed: GET /api/v1/events/stream as Server-Sent Events. Each stream reads the same feed as
 * GET /api/v1/events (readEvents, after its cursor, its filters and families), a page at a time, and
 * writes it as `id: <cursor>` / `event: <type>` / `data: <the event JSON>` frames.
 *
 * What makes a stream read again:
 *   - a NOTIFY on `kiln_events` (the server sends one with the account id after each request that wrote: events/notifier.ts) reaches ONE
 *     listener connection per process (postgres.js `listen`), which wakes the streams of that account,
 *     whichever node made the change;
 *   - a recheck once a second while any stream is open, one statement for all of them: the accounts
 *     whose event counter moved since the last look (statements.ts, EVENT_COUNTERS), for changes no
 *     request announced (the purge sweep) and notifications lost. The same recheck ends the streams of
 *     keys revoked or expired since, and cuts clients that took nothing for two heartbeat intervals;
 *   - a heartbeat: after EVENTS_HEARTBEAT_MS without a write, a `: heartbeat` comment, and a read.
 *
 * Backpressure: a stream reads its next page only when the client took the previous write (the body
 * is a pull stream with no queue of its own; the listener pulls only as the socket drains), so a slow
 * client holds at most one page here plus what the socket buffers hold, and one that takes nothing at
 * all is cut after two heartbeat intervals; it resumes with Last-Event-ID and loses nothing.
 */
import type { Database } from "../../db/client";
import type { Logger } from "../../http/context";
import { decodeEventCursor, readEvents, type EventFilter, type EventPosition, type EventView } from "./service";
import { EVENT_COUNTERS, VALID_STREAM_KEYS } from "./statements";

/** The channel the server notifies after a write (notifier.ts), with the account id as payload. */
export const EVENTS_CHANNEL = "kiln_events";
/** Events read (and written) at once by a stream. */
export const STREAM_PAGE = 100;
/** The reconnection delay a stream suggests to its client (the `retry:` field, sent once). */
export const STREAM_RETRY_MS = 2000;
/** How often each process rechecks its open streams (event counters, keys, stalled clients). */
export const STREAM_RECHECK_MS = 1000;
export const HEARTBEAT = ": heartbeat\n\n";

export interface StreamRequest {
  accountId: string;
  keyId: string;
  families: string[];
  filter: EventFilter;
  after: EventPosition;
  /** the request's signal: the client went away */
  signal: AbortSignal;
  /** the stream ends after this long (the `timeout` parameter) */
  timeoutMs?: number;
}

export interface EventStreamsOptions {
  heartbeatMs: number;
  recheckMs?: number;
  logger?: Logger;
}

export interface EventStreamsStats {
  /** streams open on this process */
  open: number;
  /** the recheck timer runs (only while a stream is open) */
  ticking: boolean;
  /** the LISTEN connection is set up */
  listening: boolean;
  /** pages read by every stream so far */
  pagesRead: number;
}

const encoder = new TextEncoder();

/** One event as a Server-Sent Events frame; its data is the event as GET /api/v1/events lists it. */
export const eventFrame = (event: EventView) => `id: ${event.cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** The live streams of one process over one database: one LISTEN connection and one recheck timer for all of them. */
export class EventStreams {
  private readonly byAccount = new Map<string, Set<LiveStream>>();
  private count = 0;
  private listening: Promise<void> | undefined;
  private listened = false;
  private unlisten: (() => Promise<unknown>) | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private rechecking = false;
  /** each open account's event counter at the last recheck */
  private readonly counters = new Map<string, number>();
  private closed = false;
  private pagesRead = 0;
  readonly heartbeatMs: number;
  private readonly recheckMs: number;

  constructor(
    private readonly database: Pick<Database, "db" | "sql">,
    private readonly options: EventStreamsOptions,
  ) {
    this.heartbeatMs = options.heartbeatMs;
    this.recheckMs = options.recheckMs ?? STREAM_RECHECK_MS;
  }

  /** The body of a new stream; once close() was called, a body that suggests a retry and ends. */
  open(request: StreamRequest): ReadableStream<Uint8Array> {
    if (this.closed) {
      return new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode(`retry: ${STREAM_RETRY_MS}\n\n`));
          controller.close();
        },
      });
    }
    return new LiveStream(this, request).body;
  }

  stats(): EventStreamsStats {
    return { open: this.count, ticking: this.ticker !== undefined, listening: this.listened, pagesRead: this.pagesRead };
  }

  /** Ends every stream (their clients resume elsewhere with Last-Event-ID) and stops listening; new streams end at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const streams of [...this.byAccount.values()]) for (const stream of [...streams]) stream.end();
    this.stopTicker();
    await this.listening;
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.listened = false;
  }

  /** @internal the stream starts: LISTEN (once), the recheck timer (while any is open) */
  add(stream: LiveStream): Promise<void> {
    let streams = this.byAccount.get(stream.request.accountId);
    if (!streams) this.byAccount.set(stream.request.accountId, (streams = new Set()));
    streams.add(stream);
    this.count++;
    this.ticker ??= setInterval(() => void this.recheck(), this.recheckMs);
    return this.listen();
  }

  /** @internal */
  remove(stream: LiveStream): void {
    const streams = this.byAccount.get(stream.request.accountId);
    if (!streams?.delete(stream)) return;
    this.count--;
    if (streams.size === 0) {
      this.byAccount.delete(stream.request.accountId);
      this.counters.delete(stream.request.accountId);
    }
    if (this.count === 0) this.stopTicker();
  }

  /** @internal the next page after `after` */
  read(request: StreamRequest, after: EventPosition): Promise<EventView[]> {
    this.pagesRead++;
    return readEvents(this.database.db, request.accountId, request.families, request.filter, after, STREAM_PAGE);
  }

  /** @internal */
  log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void {
    this.options.logger?.log(level, message, fields);
  }

  private stopTicker(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private wake(accountId: string): void {
    for (const stream of this.byAccount.get(accountId) ?? []) stream.wake();
  }

  private wakeAll(): void {
    for (const streams of this.byAccount.values()) for (const stream of streams) stream.wake();
  }

  /**
   * LISTEN once; resolves when it is set up, or failed (the recheck still wakes every stream, a second
   * later). postgres.js listens again on a new connection after losing one, and calls back: every
   * stream then reads, for the notifications lost meanwhile.
   */
  private listen(): Promise<void> {
    this.listening ??= this.database.sql
      .listen(
        EVENTS_CHANNEL,
        (accountId) => this.wake(accountId),
        () => {
          this.listened = true;
          this.wakeAll();
        },
      )
      .then(
        (listener) => {
          this.unlisten = listener.unlisten;
        },
        (error: unknown) => {
          this.listening = undefined;
          this.log("warn", "event streams: LISTEN failed; streams are woken by the recheck only", { error: (error as Error).message });
        },
      );
    return this.listening;
  }

  private async recheck(): Promise<void> {
    if (this.rechecking || this.count === 0) return;
    this.rechecking = true;
    try {
      const streams = [...this.byAccount.values()].flatMap((set) => [...set]);
      const client = this.database.db.$client;
      const [counters, valid] = (await Promise.all([
        client.unsafe(EVENT_COUNTERS, [[...this.byAccount.keys()]] as never[]),
        client.unsafe(VALID_STREAM_KEYS, [[...new Set(streams.map((stream) => stream.request.keyId))], Date.now()] as never[]),
      ])) as unknown as [{ accountId: string; lastSeq: number }[], { id: string }[]];
      for (const { accountId, lastSeq } of counters) {
        if (this.counters.get(accountId) !== lastSeq && this.byAccount.has(accountId)) this.wake(accountId);
        if (this.byAccount.has(accountId)) this.counters.set(accountId, lastSeq);
      }
      const validKeys = new Set(valid.map((row) => row.id));
      const now = Date.now();
      for (const stream of streams) {
        if (!validKeys.has(stream.request.keyId)) stream.end();
        else if (stream.stalledFor(now) > 2 * this.heartbeatMs) {
          this.log("warn", "event stream closed: the client took nothing for two heartbeat intervals", {
            accountId: stream.request.accountId,
          });
          stream.end(true);
        }
      }
    } catch (error) {
      this.log("warn", "event streams: the recheck failed", { error: (error as Error).message });
    } finally {
      this.rechecking = false;
    }
  }
}

/** One client's stream: a pull stream that writes its greeting, then pages of events and heartbeats. */
class LiveStream {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private cursor: EventPosition;
  /** something may be readable: read before waiting */
  private woken = true;
  private greeted = false;
  /** inside pull(): the client took everything written so far */
  private pulling = false;
  private ended = false;
  private settled = false;
  /** cut the connection rather than end the body */
  private cut = false;
  private lastWriteAt = Date.now();
  private readonly deadline: number | undefined;
  private readonly ready: Promise<void>;
  private interrupt: (() => void) | undefined;
  private readonly onAbort = () => this.end();

  constructor(
    private readonly hub: EventStreams,
    readonly request: StreamRequest,
  ) {
    this.cursor = request.after;
    this.deadline = request.timeoutMs === undefined ? undefined : Date.now() + request.timeoutMs;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.pull(),
        cancel: () => this.end(),
      },
      { highWaterMark: 0 },
    );
    this.ready = hub.add(this);
    if (request.signal.aborted) this.end();
    else request.signal.addEventListener("abort", this.onAbort, { once: true });
  }

  wake(): void {
    this.woken = true;
    this.interrupt?.();
  }

  /** How long the last write has been waiting for the client to take it (0 while it takes what comes). */
  stalledFor(now: number): number {
    return this.pulling || this.ended ? 0 : now - this.lastWriteAt;
  }

  /**
   * Ends the stream: at once when nothing is being read, else as soon as the read under way returns.
   * `cut`: the body fails instead, which closes the connection even though the client left data unread.
   */
  end(cut = false): void {
    if (this.ended) return;
    this.ended = true;
    this.cut = cut;
    this.request.signal.removeEventListener("abort", this.onAbort);
    this.hub.remove(this);
    this.interrupt?.();
    if (!this.pulling) this.settle();
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    try {
      // no reason given: Bun.serve would print one as an unhandled error (the hub logs why)
      if (this.cut) this.controller.error();
      else this.controller.close();
    } catch {
      // cancelled by the client already
    }
  }

  private async pull(): Promise<void> {
    this.pulling = true;
    try {
      await this.next();
    } catch (error) {
      // the database failed: end, and let the client resume (a reconnect gets 503 while it is down)
      if (!this.ended) this.hub.log("warn", "event stream ended: its read failed", { error: (error as Error).message });
      this.end();
    } finally {
      this.pulling = false;
    }
    if (this.ended) this.settle();
  }

  private write(text: string): void {
    this.controller.enqueue(encoder.encode(text));
    this.lastWriteAt = Date.now();
  }

  /** Writes the next thing the client should get, waiting until there is one; returns without writing once ended. */
  private async next(): Promise<void> {
    for (;;) {
      if (this.ended) return;
      if (!this.greeted) {
        this.greeted = true;
        return this.write(`retry: ${STREAM_RETRY_MS}\n\n`);
      }
      if (this.deadline !== undefined && Date.now() >= this.deadline) return this.end();
      if (this.woken) {
        // the first read waits for LISTEN, so that no notification of a later event comes before it
        await this.ready;
        this.woken = false;
        const events = await this.hub.read(this.request, this.cursor);
        if (this.ended) return;
        if (events.length > 0) {
          this.cursor = decodeEventCursor(events.at(-1)!.cursor);
          if (events.length === STREAM_PAGE) this.woken = true;
          return this.write(events.map(eventFrame).join(""));
        }
      }
      const now = Date.now();
      const quiet = now - this.lastWriteAt;
      if (quiet >= this.hub.heartbeatMs) {
        this.woken = true; // and a read after it: a safety net under the notifications and the recheck
        return this.write(HEARTBEAT);
      }
      await this.sleep(Math.min(this.hub.heartbeatMs - quiet, this.deadline === undefined ? Infinity : this.deadline - now));
    }
  }

  /** Waits `ms`, or less when woken or ended. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.interrupt = done;
      if (this.woken || this.ended) done();
    });
  }
}

const hubs = new WeakMap<object, EventStreams>();

/**
 * The event streams of this process over `database`, made on first use (with these options): the app
 * serves them (src/app.ts), the process closes them when it drains (src/index.ts), tests read their stats.
 */
export function eventStreamsOf(
  database: Pick<Database, "db" | "sql">,
  options: EventStreamsOptions = { heartbeatMs: 15_000 },
): EventStreams {
  let streams = hubs.get(database);
  if (!streams) hubs.set(database, (streams = new EventStreams(database, options)));
  return streams;
}
