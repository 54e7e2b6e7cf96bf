/**
 * Tenant A's requests of issue 33's findings, shared by the neighbour files that send them: each file
 * tests one finding alone, neighbour-all.test.ts sends them all at once; and tenant B's stream and
 * webhook receivers.
 */
import { expect } from "bun:test";
import { SseReader } from "../../modules/events/sse";

const joins = Array.from({ length: 13 }, () => "join($root,$root)").join(" + ");
const zeros = Array(800).fill(0);
/** Finding 2's generate.filter (1,907 bytes, read inline): every element kept, each evaluation building about 16.6 M characters. */
export const FILTER_FINDING = JSON.stringify({ inputs: { primary: zeros }, config: { condition: joins } });
/** Finding 2's variant: the last element's evaluation passes the expression's own bound (400, charged). */
export const FILTER_FAILS_LAST = JSON.stringify({
  inputs: { primary: [...zeros.slice(1), 1] },
  config: { condition: `${joins} + ($ == 1 ? join($root,$root) : "")` },
});

/**
 * A filter whose condition looks for -1 through the whole array for each of its n numbers: n² cheap
 * comparisons, no allocation (30,000 numbers: 2.4 s here, 18 MiB).
 */
export const quadraticFilter = (n: number) =>
  JSON.stringify({ inputs: { primary: Array.from({ length: n }, (_, i) => i) }, config: { condition: "contains($root, -1)" } });

/** Tenant B's request of finding 4: about 6 KB of records, two fields picked (over UTILITY_INLINE_MAX_BYTES: run in a worker). */
export const PICK_FIELDS = JSON.stringify({
  inputs: {
    primary: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `customer ${i}`, email: `c${i}@example.com`, notes: "n".repeat(80) })),
  },
  config: { paths: ["id", "name"] },
});

/** One of A's event streams, drained as fast as it comes, counting the events in it (no parsing: the test's CPU is the server's too). */
export interface Drained {
  events: number;
  ended: boolean;
  stop(): void;
}

export function drain(response: Response, aborter: AbortController): Drained {
  const state: Drained = { events: 0, ended: false, stop: () => aborter.abort() };
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) state.events += decoder.decode(chunk, { stream: true }).split("\nevent: ").length - 1;
    } catch {}
    state.ended = true;
  })();
  return state;
}

/** A's webhook receiver: answers 204 and counts the deliveries. */
export function countingReceiver(): { origin: string; received(): number; stop(): void } {
  let received = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      received++;
      return new Response(null, { status: 204 });
    },
  });
  return { origin: server.url.origin, received: () => received, stop: () => server.stop(true) };
}

/** B's webhook receiver: `arrived` holds when each document's first event (by the document's name) came. */
export function arrivalReceiver(): { origin: string; arrived: Map<string, number>; stop(): void } {
  const arrived = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const event = (await request.json()) as { data: { document?: { name: string } } };
      const name = event.data.document?.name;
      if (name !== undefined && !arrived.has(name)) arrived.set(name, performance.now());
      return new Response(null, { status: 204 });
    },
  });
  return { origin: server.url.origin, arrived, stop: () => server.stop(true) };
}

/** B's live stream of its events (`query`: the stream's filters), read as it comes; abort() closes it. */
export async function openStream(origin: string, key: string, query: string): Promise<{ reader: SseReader; abort(): void }> {
  const aborter = new AbortController();
  const response = await fetch(`${origin}/api/v1/events/stream?${query}`, {
    headers: { authorization: `Bearer ${key}` },
    signal: aborter.signal,
  });
  expect(response.status).toBe(200);
  return { reader: new SseReader(response.body!), abort: () => aborter.abort() };
}
