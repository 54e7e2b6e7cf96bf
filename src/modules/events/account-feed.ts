/**
 * The streams of one account on one process, and the one read of the account's feed they share
 * (stream.ts says how the feed is woken; live-stream.ts what each stream does with what it is handed).
 */
import { decodeEventCursor, type EventPosition, type EventView } from "./service";
import { eventFrame, STREAM_PAGE } from "./stream-protocol";

/** An event read by an account's feed, with what every stream needs of it made once. */
export interface FeedItem {
  event: EventView;
  position: EventPosition;
  frame: string;
}

/** An account's feed as a stream saw it before its last read of its own (AccountFeed.join). */
export interface FeedMark {
  epoch: number;
  handedOut: number;
}

/** What the feed needs of the process's streams (EventStreams). */
export interface FeedHub {
  readShared(accountId: string, after: EventPosition): Promise<EventView[]>;
  log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void;
}

/** What the feed needs of one stream (Stream). */
export interface FeedMember {
  /** the last event handed to the client */
  readonly cursor: EventPosition;
  offer(items: FeedItem[]): boolean;
  end(): void;
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
export class AccountFeed<Stream extends FeedMember> {
  private readonly all = new Set<Stream>();
  private readonly joined = new Set<Stream>();
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
    private readonly hub: FeedHub,
    readonly accountId: string,
  ) {}

  get size(): number {
    return this.all.size;
  }

  get joinedCount(): number {
    return this.joined.size;
  }

  streamList(): Stream[] {
    return [...this.all];
  }

  add(stream: Stream): void {
    this.all.add(stream);
  }

  /** Whether the stream was one of this feed's. */
  remove(stream: Stream): boolean {
    if (!this.all.delete(stream)) return false;
    this.leave(stream);
    return true;
  }

  mark(): FeedMark {
    return { epoch: this.epoch, handedOut: this.handedOut };
  }

  /** After a read of its own that found less than a page: joins, or false (the stream reads again). */
  join(stream: Stream, mark: FeedMark): boolean {
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
  leave(stream: Stream): void {
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
