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
 *
 * Cluster-once: per node by design. The recheck (core/background.ts `every`, while a stream is open)
 * looks after this process's own streams, and each node's streams need their own look; it is started by
 * the first stream and stopped with the last, and the node's drain ends the streams (src/index.ts).
 */
import { EVENT_STREAM_LIMITS_DEFAULT, type EventStreamLimits } from "../../config";
import { every, type Running } from "../../core/background";
import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import type { Database } from "../../db/client";
import type { Logger } from "../../observability/logger";
import type { EventStreamLimit, Metrics } from "../../observability/metrics";
import { AccountFeed } from "./account-feed";
import { EVENT_FAMILIES } from "./catalogue";
import { LiveStream, type StreamRequest } from "./live-stream";
import { eventCounters, validStreamKeys } from "./repository";
import { type EventFilter, type EventPosition, type EventView, readEvents } from "./service";
import { encoder, STREAM_PAGE, STREAM_RETRY_MS } from "./stream-protocol";

/** The channel the server notifies after a write (notifier.ts), with the account id as payload. */
export const EVENTS_CHANNEL = "kiln_events";
/** How often each process rechecks its open streams (event counters, keys, stalled clients). */
export const STREAM_RECHECK_MS = 1000;

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

/** The live streams of one process over one database: one LISTEN connection and one recheck timer for all of them. */
export class EventStreams {
  private readonly feeds = new Map<string, AccountFeed<LiveStream>>();
  private readonly perKey = new Map<string, number>();
  private count = 0;
  private listening: Promise<void> | undefined;
  private listened = false;
  private unlisten: (() => Promise<unknown>) | undefined;
  private ticker: Running | undefined;
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
  add(stream: LiveStream): { feed: AccountFeed<LiveStream>; ready: Promise<void> } {
    const { accountId, keyId } = stream.request;
    let feed = this.feeds.get(accountId);
    if (!feed) this.feeds.set(accountId, (feed = new AccountFeed(this, accountId)));
    feed.add(stream);
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
    this.count++;
    this.ticker ??= every(this.recheckMs, () => this.recheck());
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
    void this.ticker?.stop();
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
      const [counters, valid] = await Promise.all([
        eventCounters(this.database.db, [...this.feeds.keys()]),
        validStreamKeys(this.database.db, [...this.perKey.keys()], Date.now()),
      ]);
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
