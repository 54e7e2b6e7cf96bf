/** One client's live event stream (stream.ts says how streams are fed, limited and ended). */

import type { AccountFeed, FeedItem } from "./account-feed";
import { compareEventPositions, decodeEventCursor, type EventFilter, type EventPosition, type EventView, eventMatches } from "./service";
import { encoder, eventFrame, HEARTBEAT, STREAM_PAGE, STREAM_RETRY_MS } from "./stream-protocol";

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

/** What a stream needs of the process's streams (EventStreams). */
export interface StreamHub {
  readonly heartbeatMs: number;
  add(stream: LiveStream): { feed: AccountFeed<LiveStream>; ready: Promise<void> };
  remove(stream: LiveStream): void;
  readOwn(request: StreamRequest, after: EventPosition): Promise<EventView[]>;
  log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void;
}

/** One client's stream: a pull stream that writes its greeting, then pages of events and heartbeats. */
export class LiveStream {
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
  private readonly feed: AccountFeed<LiveStream>;
  private readonly ready: Promise<void>;
  private interrupt: (() => void) | undefined;
  private readonly onAbort = () => this.end();

  constructor(
    private readonly hub: StreamHub,
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
