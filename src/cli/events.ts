/**
 * kiln events tail: follows GET /api/v1/events/stream (Server-Sent Events), one line per event. When
 * the connection drops or the stream ends (a node shutting down, a proxy timing out), it reconnects
 * with the cursor of the last event it printed as Last-Event-ID, backing off, so no event is missed or
 * printed twice. It stops on a refusal that a retry cannot fix (400, 401, 403, 404).
 */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { formatTime, type GlobalOptions, writeStdout } from "./output";

/** The first reconnection waits the server's `retry:` hint (this before it sent one), then twice as long each time. */
const RETRY_DEFAULT_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** Nothing at all (not even a heartbeat) for this long: the connection is taken for dead and replaced. */
const SILENCE_MS = 60_000;

interface StreamEvent {
  id: string;
  type: string;
  createdAt: number;
  cursor: string;
  data: { document?: { id: string; name?: string; folder?: string | null }; pipeline?: { id: string; name?: string } };
}

interface Frame {
  id?: string;
  data?: string;
  retry?: number;
}

function parseFrame(block: string): Frame {
  const frame: Frame = {};
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") frame.id = value;
    else if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
    else if (field === "retry" && /^\d+$/.test(value)) frame.retry = Number(value);
  }
  return frame;
}

/** One line for a person: when, what, which document or pipeline. */
function eventLine(event: StreamEvent): string {
  const subject = event.data.document ?? event.data.pipeline;
  const folder = event.data.document?.folder;
  const name = subject?.name === undefined ? "" : folder ? `${folder}/${subject.name}` : subject.name;
  return [formatTime(event.createdAt), event.type, subject?.id ?? "-", name].join("  ").trimEnd();
}

/** Whether a failed request is worth retrying: the server unreachable, overloaded or failing, rather than refusing. */
function retryable(error: unknown): boolean {
  if (!(error instanceof CliError)) return true;
  if (error.message.startsWith("cannot reach")) return true;
  const status = Number(/^(\d{3}):/.exec(error.message)?.[1]);
  return status === 408 || status === 429 || status >= 500;
}

export function eventsCommand(client: () => Client): Command {
  const events = new Command("events").description("the account's events: what changed, as it happens");
  events
    .command("tail")
    .description(
      "follow the events as they happen, one line each (the API's JSON with --json); after a dropped connection it reconnects from the last event printed, so none is missed or repeated",
    )
    .option("--type <types>", "comma-separated event types or families (document.created,pipeline.*)")
    .option("--folder <path>", "only events of documents in this folder or below it")
    .option("--no-recursive", "with --folder: only that folder itself, not its subfolders")
    .option("--after <cursor>", "start after this cursor (an event's cursor); default: from the oldest event kept")
    .action(async (options: { type?: string; folder?: string; recursive: boolean; after?: string }, command: Command) => {
      const json = command.optsWithGlobals<GlobalOptions>().json === true;
      const query = new URLSearchParams();
      if (options.type !== undefined) query.set("type", options.type);
      if (options.folder !== undefined) query.set("folder", options.folder);
      if (!options.recursive) query.set("recursive", "false");
      const path = `/api/v1/events/stream${query.size > 0 ? `?${query}` : ""}`;
      let cursor = options.after;
      let retryMs = RETRY_DEFAULT_MS;
      let failures = 0;
      for (;;) {
        let reason: string;
        try {
          const response = await client().request("GET", path, { headers: cursor ? { "last-event-id": cursor } : {} });
          failures = 0;
          reason = await follow(response, async (frame) => {
            if (frame.retry !== undefined) retryMs = frame.retry;
            if (frame.data === undefined) return;
            await writeStdout(`${json ? frame.data : eventLine(JSON.parse(frame.data) as StreamEvent)}\n`);
            if (frame.id) cursor = frame.id;
          });
        } catch (error) {
          if (!retryable(error)) throw error;
          reason = error instanceof CliError ? error.message : (error as Error).message;
        }
        const delay = Math.min(RETRY_MAX_MS, retryMs * 2 ** failures) * (0.8 + Math.random() * 0.4);
        failures++;
        process.stderr.write(
          `kiln: ${reason}; reconnecting in ${(delay / 1000).toFixed(1)} s ${cursor ? `after ${cursor}` : "from the start"}\n`,
        );
        await Bun.sleep(delay);
      }
    });
  return events;
}

/** Reads the stream, handing each complete frame over in order; resolves with why it stopped. */
async function follow(response: Response, onFrame: (frame: Frame) => Promise<void>): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let silence: ReturnType<typeof setTimeout> | undefined;
  let silent = false;
  const watch = () => {
    clearTimeout(silence);
    silence = setTimeout(() => {
      silent = true;
      void reader.cancel();
    }, SILENCE_MS);
  };
  try {
    watch();
    for (;;) {
      const { done, value } = await reader.read();
      if (silent) return `nothing received for ${SILENCE_MS / 1000} s`;
      if (done) return "the stream ended";
      watch();
      buffer += decoder.decode(value, { stream: true }).replaceAll("\r\n", "\n");
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        await onFrame(parseFrame(block));
      }
    }
  } catch (error) {
    return silent ? `nothing received for ${SILENCE_MS / 1000} s` : `the connection was lost (${(error as Error).message})`;
  } finally {
    clearTimeout(silence);
  }
}
