/**
 * The live feed: GET /api/v1/events/stream as Server-Sent Events, `id: <cursor>` / `event: <type>` /
 * `data: <the event JSON>` frames of the same feed as GET /api/v1/events (readEvents), with its filters
 * and the families of the stream's key.
 *
 * One read per change of an account, whatever the number of its streams: each account with an open
 * stream has an AccountFeed, which reads the account's feed after its own position (every family,
 * no filter) and hands each event, its frame made once, to the streams that joined it; each stream
 * keeps those that its filters and families let through. A stream starts behind (Last-Event-ID, `after`
 * or the oldest event) and catches up with reads of its own, one page per page its client takes; after
 * a read that found less than a page it joins its account's feed (AccountFeed.join says how no event is
 * lost or repeated at that seam) and reads no more.
 *
 * What makes an account's feed read:
 *   - a NOTIFY on `kiln_events` (the server sends one with the account id after each request that wrote:
 *     events/notifier.ts) reaches ONE listener connection per process (postgres.js `listen`), whichever
 *     node made the change; a read it caused that found nothing (a notification that came before its
 *     transaction's commit numbered its events) is tried once more NOTIFIED_RETRY_MS later;
 *   - a recheck once a second while any stream is open, one statement for the whole process: the
 *     accounts whose event counter moved since the last look (statements.ts, EVENT_COUNTERS), for changes
 *     no request announced (the purge sweep) and notifications lost. The same recheck ends the streams of
 *     keys revoked or expired since, and cuts clients that took nothing for two heartbeat intervals.
 * A heartbeat (`: heartbeat` after EVENTS_HEARTBEAT_MS without a write) reads nothing.
 *
 * Backpressure: the body is a pull stream with no queue of its own (the listener pulls only as the socket
 * drains). A joined stream holds at most STREAM_PAGE events handed to it and not yet taken (references to
 * the events its account's feed read once); one more and it leaves the feed and reads on its own again,
 * at its client's pace, so a slow client never holds the feed or the other streams. One that takes nothing
 * at all is cut after two heartbeat intervals; it resumes with Last-Event-ID and loses nothing.
 *
 * Limits: EVENT_STREAMS_PER_KEY and EVENT_STREAMS_PER_ACCOUNT (429) and EVENT_STREAMS_PER_PROCESS (503),
 * counted by this process alone: what they protect (sockets, memory, the work each event costs here) is
 * the process's, and a count shared through Redis would outlive a node that died with its streams open.
 * A stream's slot is freed whenever it ends: the client went away, its key was revoked, it was cut, it
 * timed out, the node drains.
 */
import { EVENT_STREAM_LIMITS_DEFAULT, type EventStreamLimits } from "../../config";
import { httpError } from "../../core/errors";
import { ERRORS } from "../../core/error-codes";
import type { Database } from "../../db/client";
import type { Logger } from "../../http/context";
import type { EventStreamLimit, Metrics } from "../../http/metrics";
import {
  compareEventPositions,
  decodeEventCursor,
  EVENT_FAMILIES,
  eventMatches,
  readEvents,
  type EventFilter,
  type EventPosition,
  type EventView,
} from "./service";
import { EVENT_COUNTERS, VALID_STREAM_KEYS } from "./statements";

/** The channel the server notifies after a write (notifier.ts), with the account id as payload. */
export const EVENTS_CHANNEL = "kiln_events";
/** Events read at once (by an account's feed or a stream catching up), and written at once by a stream. */
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

/** A page of the feed after `after`, oldest first (readEvents over the process's database; tests wrap it). */
export type FeedReader = (
  accountId: string,
  families: string[],
  filter: EventFilter,
  after: EventPosition,
  limit: number,
) => Promise<EventView[]>;

export interface EventStreamsOptions {
  heartbeatMs: number;
  recheckMs?: number;
  logger?: Logger;
  limits?: EventStreamLimits;
  reader?: FeedReader;
  metrics?: Pick<Metrics, "observeEventFeedRead" | "observeEventStreamRefused">;
}

export interface EventStreamsStats {
  /** streams open on this process */
  open: number;
  /** of them, those that joined their account's feed (the others catch up with reads of their own) */
  joined: number;
  /** the recheck timer runs (only while a stream is open) */
  ticking: boolean;
  /** the LISTEN connection is set up */
  listening: boolean;
  /** pages of the feed read so far, shared and per stream */
  pagesRead: number;
  /** of them, the reads of an account's feed shared by its streams */
  sharedReads: number;
}

const encoder = new TextEncoder();

/** One event as a Server-Sent Events frame; its data is the event as GET /api/v1/events lists it. */
export const eventFrame = (event: EventView) => `id: ${event.cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** An event read by an account's feed, with what every stream needs of it made once. */
interface FeedItem {
  event: EventView;
  position: EventPosition;
  frame: string;
}

/** An account's feed as a stream saw it before its last read of its own (AccountFeed.join). */
interface FeedMark {
  epoch: number;
  handedOut: number;
}

/** The live streams of one process over one database: one LISTEN connection and one recheck timer for all of them. */
export class EventStreams {
  private readonly feeds = new Map<string, AccountFeed>();
  private readonly perKey = new Map<string, number>();
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
  private sharedReads = 0;
  readonly heartbeatMs: number;
  private readonly recheckMs: number;
  private readonly limits: EventStreamLimits;
  private readonly reader: FeedReader;

  constructor(
    private readonly database: Pick<Database, "db" | "sql">,
    private readonly options: EventStreamsOptions,
  ) {
    this.heartbeatMs = options.heartbeatMs;
    this.recheckMs = options.recheckMs ?? STREAM_RECHECK_MS;
    this.limits = options.limits ?? EVENT_STREAM_LIMITS_DEFAULT;
    this.reader =
      options.reader ?? ((accountId, families, filter, after, limit) => readEvents(database.db, accountId, families, filter, after, limit));
  }

  /**
   * The body of a new stream, or a 429 (503 for the process's limit) once a limit is reached; once close()
   * was called, a body that suggests a retry and ends.
   */
  open(request: StreamRequest): ReadableStream<Uint8Array> {
    if (this.closed) {
      return new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode(`retry: ${STREAM_RETRY_MS}\n\n`));
          controller.close();
        },
      });
    }
    this.checkLimits(request);
    return new LiveStream(this, request).body;
  }

  stats(): EventStreamsStats {
    let joined = 0;
    for (const feed of this.feeds.values()) joined += feed.joinedCount;
    return {
      open: this.count,
      joined,
      ticking: this.ticker !== undefined,
      listening: this.listened,
      pagesRead: this.pagesRead,
      sharedReads: this.sharedReads,
    };
  }

  /** Ends every stream (their clients resume elsewhere with Last-Event-ID) and stops listening; new streams end at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const stream of this.streams()) stream.end();
    this.stopTicker();
    await this.listening;
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.listened = false;
  }

  private checkLimits(request: StreamRequest): void {
    const { perKey, perAccount, perProcess } = this.limits;
    // a slot frees when a stream ends; a client gone without closing its connection is noticed within two heartbeats
    const retryAfter = Math.max(1, Math.ceil((2 * this.heartbeatMs) / 1000));
    const extra = { headers: { "Retry-After": String(retryAfter) } };
    const refused = (limit: EventStreamLimit) => this.options.metrics?.observeEventStreamRefused(limit);
    if ((this.perKey.get(request.keyId) ?? 0) >= perKey) {
      refused("key");
      throw httpError(
        ERRORS.too_many_streams,
        `This API key has ${perKey} event streams open, the most allowed (EVENT_STREAMS_PER_KEY); close one first, or retry in ${retryAfter} s`,
        extra,
      );
    }
    if ((this.feeds.get(request.accountId)?.size ?? 0) >= perAccount) {
      refused("account");
      throw httpError(
        ERRORS.too_many_streams,
        `This account has ${perAccount} event streams open on this node, the most allowed (EVENT_STREAMS_PER_ACCOUNT); close one first, or retry in ${retryAfter} s`,
        extra,
      );
    }
    if (this.count >= perProcess) {
      refused("process");
      throw httpError(
        ERRORS.too_many_streams_on_node,
        `This node serves ${perProcess} event streams, the most it allows (EVENT_STREAMS_PER_PROCESS); retry in ${retryAfter} s`,
        extra,
      );
    }
  }

  /** @internal the stream starts: it takes its slots; LISTEN (once), the recheck timer (while any is open) */
  add(stream: LiveStream): { feed: AccountFeed; ready: Promise<void> } {
    const { accountId, keyId } = stream.request;
    let feed = this.feeds.get(accountId);
    if (!feed) this.feeds.set(accountId, (feed = new AccountFeed(this, accountId)));
    feed.add(stream);
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
    this.count++;
    this.ticker ??= setInterval(() => void this.recheck(), this.recheckMs);
    return { feed, ready: this.listen() };
  }

  /** @internal the stream ended: its slots are free */
  remove(stream: LiveStream): void {
    const { accountId, keyId } = stream.request;
    const feed = this.feeds.get(accountId);
    if (!feed?.remove(stream)) return;
    if (feed.size === 0) {
      this.feeds.delete(accountId);
      this.counters.delete(accountId);
    }
    const keyStreams = (this.perKey.get(keyId) ?? 1) - 1;
    if (keyStreams === 0) this.perKey.delete(keyId);
    else this.perKey.set(keyId, keyStreams);
    this.count--;
    if (this.count === 0) this.stopTicker();
  }

  /** @internal one stream's next page after `after`, with its families and filter */
  readOwn(request: StreamRequest, after: EventPosition): Promise<EventView[]> {
    this.pagesRead++;
    this.options.metrics?.observeEventFeedRead("stream");
    return this.reader(request.accountId, request.families, request.filter, after, STREAM_PAGE);
  }

  /** @internal the next page of an account's whole feed after `after`, for all its joined streams */
  readShared(accountId: string, after: EventPosition): Promise<EventView[]> {
    this.pagesRead++;
    this.sharedReads++;
    this.options.metrics?.observeEventFeedRead("shared");
    return this.reader(accountId, EVENT_FAMILIES, {}, after, STREAM_PAGE);
  }

  /** @internal */
  log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void {
    this.options.logger?.log(level, message, fields);
  }

  private *streams(): Generator<LiveStream> {
    for (const feed of [...this.feeds.values()]) yield* feed.streamList();
  }

  private stopTicker(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private wake(accountId: string, notified = false): void {
    this.feeds.get(accountId)?.wake(notified);
  }

  private wakeAll(): void {
    for (const feed of this.feeds.values()) feed.wake();
  }

  /**
   * LISTEN once; resolves when it is set up, or failed (the recheck still wakes every feed, a second
   * later). postgres.js listens again on a new connection after losing one, and calls back: every
   * feed then reads, for the notifications lost meanwhile.
   */
  private listen(): Promise<void> {
    this.listening ??= this.database.sql
      .listen(
        EVENTS_CHANNEL,
        (accountId) => this.wake(accountId, true),
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
      const client = this.database.db.$client;
      const [counters, valid] = (await Promise.all([
        client.unsafe(EVENT_COUNTERS, [[...this.feeds.keys()]] as never[]),
        client.unsafe(VALID_STREAM_KEYS, [[...this.perKey.keys()], Date.now()] as never[]),
      ])) as unknown as [{ accountId: string; lastSeq: number }[], { id: string }[]];
      for (const { accountId, lastSeq } of counters) {
        if (!this.feeds.has(accountId)) continue;
        if (this.counters.get(accountId) !== lastSeq) this.wake(accountId);
        this.counters.set(accountId, lastSeq);
      }
      const validKeys = new Set(valid.map((row) => row.id));
      const now = Date.now();
      for (const stream of this.streams()) {
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

/** Events an account's feed keeps while a stream of it catches up, for it to join without reading again. */
const RECENT_MAX = STREAM_PAGE;
/**
 * A read after a NOTIFY that found nothing (the event behind another transaction still running, often
 * another tenant's write of a few milliseconds) is tried once more this much later, rather than at the
 * recheck up to a second later.
 */
const NOTIFIED_RETRY_MS = 50;

/**
 * The streams of one account on this process, and the one read of its feed they share. The feed has a
 * position once a stream joined it: every event up to there was read and handed to the joined streams.
 *
 * Joining without a gap or a repeat: before each of its own reads a stream takes a mark (the feed's epoch
 * and how many events it had handed out). A read that found less than a page has everything readable at
 * the time, so everything up to the feed's position at the mark (readable already when the feed read it).
 * If the feed handed out nothing since, the stream joins; if it handed out a few events, it joins with
 * those (kept in `recent` while a stream catches up); if more, or the feed started over (a new epoch:
 * it lost its last joined stream, or took a first one), the stream reads again. Every event handed to a
 * stream at or before its cursor (the last event it got) is dropped: those its own read already had.
 */
class AccountFeed {
  private readonly all = new Set<LiveStream>();
  private readonly joined = new Set<LiveStream>();
  private position: EventPosition | undefined;
  private epoch = 0;
  private handedOut = 0;
  /** the last events handed out, while a stream of the account catches up */
  private recent: FeedItem[] = [];
  private reading = false;
  private again = false;
  /** a NOTIFY came since the last read began */
  private notified = false;

  constructor(
    private readonly hub: EventStreams,
    readonly accountId: string,
  ) {}

  get size(): number {
    return this.all.size;
  }

  get joinedCount(): number {
    return this.joined.size;
  }

  streamList(): LiveStream[] {
    return [...this.all];
  }

  add(stream: LiveStream): void {
    this.all.add(stream);
  }

  /** Whether the stream was one of this feed's. */
  remove(stream: LiveStream): boolean {
    if (!this.all.delete(stream)) return false;
    this.leave(stream);
    return true;
  }

  mark(): FeedMark {
    return { epoch: this.epoch, handedOut: this.handedOut };
  }

  /** After a read of its own that found less than a page: joins, or false (the stream reads again). */
  join(stream: LiveStream, mark: FeedMark): boolean {
    if (this.position === undefined) {
      // the first to join: the feed reads from its cursor, at once, for a NOTIFY that came during its read
      this.startOver(stream.cursor);
      this.joined.add(stream);
      this.wake();
      return true;
    }
    if (mark.epoch !== this.epoch) return false;
    const missed = this.handedOut - mark.handedOut;
    if (missed > this.recent.length) return false;
    if (missed > 0 && !stream.offer(this.recent.slice(this.recent.length - missed))) return false;
    this.joined.add(stream);
    return true;
  }

  /** The stream stops taking from the feed (it ended, or fell a page behind and reads on its own). */
  leave(stream: LiveStream): void {
    if (this.joined.delete(stream) && this.joined.size === 0) this.startOver(undefined);
  }

  /** Something may be readable (`notified`: a NOTIFY said so): read (once more after the read under way, if one is). */
  wake(notified = false): void {
    if (notified) this.notified = true;
    if (this.position === undefined) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.read();
  }

  /** A new epoch: marks taken before it no longer say what the joined streams have. */
  private startOver(position: EventPosition | undefined): void {
    this.position = position;
    this.epoch++;
    this.handedOut = 0;
    this.recent = [];
  }

  private async read(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.again = false;
        const { epoch, position, notified } = this;
        this.notified = false;
        const events = await this.hub.readShared(this.accountId, position!);
        if (epoch !== this.epoch) {
          this.again = true; // started over meanwhile: read from the new position, if any
          continue;
        }
        if (events.length === 0) {
          if (notified) setTimeout(() => this.wake(), NOTIFIED_RETRY_MS);
          continue;
        }
        const items = events.map((event) => ({ event, position: decodeEventCursor(event.cursor), frame: eventFrame(event) }));
        this.position = items.at(-1)!.position;
        this.handedOut += items.length;
        if (this.joined.size < this.all.size) this.recent = [...this.recent, ...items].slice(-RECENT_MAX);
        else this.recent = [];
        for (const stream of [...this.joined]) if (!stream.offer(items)) this.leave(stream);
        if (events.length === STREAM_PAGE) this.again = true;
      } while (this.again && this.position !== undefined);
    } catch (error) {
      // the database failed: the joined streams end, and their clients resume (a reconnect gets 503 while it is down)
      this.hub.log("warn", "event streams ended: their account's read failed", { error: (error as Error).message });
      for (const stream of [...this.joined]) stream.end();
    } finally {
      this.reading = false;
    }
  }
}

/** One client's stream: a pull stream that writes its greeting, then pages of events and heartbeats. */
class LiveStream {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  /** the last event handed to the client (written, or waiting in `pending`) */
  cursor: EventPosition;
  /** events the account's feed handed over, not yet written */
  private pending: FeedItem[] = [];
  /** taking events from the account's feed; else reading its own, when its client pulls */
  private joined = false;
  private greeted = false;
  /** inside pull(): the client took everything written so far */
  private pulling = false;
  private ended = false;
  private settled = false;
  /** cut the connection rather than end the body */
  private cut = false;
  private lastWriteAt = Date.now();
  private readonly deadline: number | undefined;
  private readonly feed: AccountFeed;
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
    ({ feed: this.feed, ready: this.ready } = hub.add(this));
    if (request.signal.aborted) this.end();
    else request.signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /**
   * Takes the events after its cursor that its filters and families let through; false when that would
   * hold more than a page unwritten: it then takes none of the rest, leaves the feed and reads on its own.
   */
  offer(items: FeedItem[]): boolean {
    if (this.ended) return true;
    for (const item of items) {
      if (compareEventPositions(item.position, this.cursor) <= 0) continue;
      if (!eventMatches(item.event, this.request.families, this.request.filter)) continue;
      if (this.pending.length >= STREAM_PAGE) {
        this.joined = false;
        this.interrupt?.();
        return false;
      }
      this.pending.push(item);
      this.cursor = item.position;
    }
    this.interrupt?.();
    return true;
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
    this.pending = [];
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
      if (this.pending.length > 0) {
        const items = this.pending;
        this.pending = [];
        return this.write(items.map((item) => item.frame).join(""));
      }
      if (!this.joined) {
        // the first read waits for LISTEN, so that no notification of a later event comes before it
        await this.ready;
        if (this.ended) return;
        const mark = this.feed.mark();
        const events = await this.hub.readOwn(this.request, this.cursor);
        if (this.ended) return;
        if (events.length > 0) this.cursor = decodeEventCursor(events.at(-1)!.cursor);
        this.joined = events.length < STREAM_PAGE && this.feed.join(this, mark);
        if (events.length > 0) return this.write(events.map(eventFrame).join(""));
        if (!this.joined) continue;
      }
      const now = Date.now();
      const quiet = now - this.lastWriteAt;
      if (quiet >= this.hub.heartbeatMs) return this.write(HEARTBEAT);
      if (this.pending.length > 0) continue;
      await this.sleep(Math.min(this.hub.heartbeatMs - quiet, this.deadline === undefined ? Infinity : this.deadline - now));
    }
  }

  /** Waits `ms`, or less when handed events, detached or ended. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.interrupt = done;
      if (this.pending.length > 0 || !this.joined || this.ended) done();
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
