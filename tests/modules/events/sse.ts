/** A Server-Sent Events reader for tests: parses the frames of a response body as they come. */

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
  comment?: string;
  /** performance.now() when the frame was complete */
  at: number;
}

export class SseReader {
  readonly frames: SseFrame[] = [];
  /** the events received (frames with data), their data parsed */
  readonly events: any[] = [];
  ended = false;
  error: unknown;
  private waiters: (() => void)[] = [];
  private readonly done: Promise<void>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.done = this.pump(body);
  }

  get heartbeats(): number {
    return this.frames.filter((frame) => frame.comment === " heartbeat").length;
  }

  /** the id of the last event received, as an EventSource keeps it */
  get lastEventId(): string | undefined {
    return this.frames.findLast((frame) => frame.id !== undefined)?.id;
  }

  /** resolves once `condition` holds; rejects after `timeoutMs` with what was received */
  async until(condition: (reader: SseReader) => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition(this)) {
      if (this.ended && !condition(this))
        throw new Error(`the stream ended (${String(this.error ?? "")}) after ${this.frames.length} frames`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms with ${this.frames.length} frames`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** resolves once the body ended (or failed) */
  async finished(timeoutMs = 5000): Promise<void> {
    await Promise.race([
      this.done,
      Bun.sleep(timeoutMs).then(() => {
        throw new Error(`the stream did not end within ${timeoutMs} ms`);
      }),
    ]);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end !== -1) {
          const frame = parseFrame(buffer.slice(0, end));
          this.frames.push(frame);
          if (frame.data !== undefined) this.events.push(JSON.parse(frame.data));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
        this.notify();
      }
    } catch (error) {
      this.error = error;
    } finally {
      this.ended = true;
      this.notify();
    }
  }
}

export function parseFrame(block: string): SseFrame {
  const frame: SseFrame = { at: performance.now() };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) {
      frame.comment = line.slice(1);
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") frame.id = value;
    else if (field === "event") frame.event = value;
    else if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
    else if (field === "retry") frame.retry = Number(value);
  }
  return frame;
}

/** Every event frame of a complete SSE text (the rest of a cut one is dropped, as an EventSource drops it). */
export function framesOf(text: string): SseFrame[] {
  const blocks = text.split("\n\n");
  blocks.pop(); // after the last blank line: an unfinished frame, or nothing
  return blocks.map(parseFrame);
}
