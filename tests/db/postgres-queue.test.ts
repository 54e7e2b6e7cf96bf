/**
 * patches/postgres@3.4.9.patch: postgres.js keeps its connections in queues (open, busy, …) and moves a
 * connection from one to another on every query. Unpatched, a queue that never empties (a pool with a
 * connection always idle, as Kiln's has beside its background work) kept every spent slot, and each
 * move searched them all: each query cost time in proportion to the queries served so far (get metadata
 * fell from 45 to 190 µs of CPU a request within two minutes, bench/experiments/README.md). Patched, a
 * search starts at the head and the spent slots are dropped.
 */
import { afterEach, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { random } from "../support/random";

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}
const { default: Queue } = (await import(join(dirname(Bun.resolveSync("postgres", import.meta.dir)), "queue.js"))) as {
  default: <T>(initial?: T[]) => Queue<T>;
};

const indexOf = Array.prototype.indexOf;
afterEach(() => {
  Array.prototype.indexOf = indexOf;
});

test("a pool's queue that never empties searches only its live entries, and holds no more than about twice them plus 1,024", () => {
  const open = Queue<{ id: number }>();
  const busy = Queue<{ id: number }>();
  const connections = [{ id: 1 }, { id: 2 }, { id: 3 }];
  for (const connection of connections) open.push(connection);
  const queueOf = new Map(connections.map((connection) => [connection, open]));
  // how postgres.js moves a connection: out of the queue it was last put in, into the next
  const move = (connection: { id: number }, to: Queue<{ id: number }>) => {
    queueOf.get(connection)!.remove(connection);
    to.push(connection);
    queueOf.set(connection, to);
  };
  let widestSearch = 0;
  let longestArray = 0;
  Array.prototype.indexOf = function (this: unknown[], ...args: [unknown, number?]) {
    widestSearch = Math.max(widestSearch, this.length - (args[1] ?? 0));
    longestArray = Math.max(longestArray, this.length);
    return indexOf.apply(this, args);
  } as typeof indexOf;
  // 100,000 queries, each taking the idle connection at the head and putting it back: `open` never empties
  for (let query = 0; query < 100_000; query++) {
    const connection = open.shift()!;
    move(connection, busy); // it left `open` by shift already: this search finds nothing
    move(connection, open);
  }
  Array.prototype.indexOf = indexOf;
  expect(open.length).toBe(3);
  expect(busy.length).toBe(0);
  expect(widestSearch).toBeLessThanOrEqual(3);
  expect(longestArray).toBeLessThanOrEqual(2 * 1024 + 3);
});

test("push, shift and remove keep first-in first-out order and their answers across the dropping of spent slots", () => {
  const rng = random(20261128);
  for (let run = 0; run < 20; run++) {
    const queue = Queue<number>();
    const model: number[] = [];
    let next = 0;
    for (let step = 0; step < 20_000; step++) {
      const roll = rng();
      // pushes and shifts around a small live set that never empties (so spent slots pile up and are dropped), with removes of live and absent entries
      if (roll < 0.45 || model.length < 3) {
        queue.push(next);
        model.push(next++);
      } else if (roll < 0.9) {
        expect(queue.shift()).toBe(model.shift()!);
      } else {
        const target = rng() < 0.7 ? model[Math.floor(rng() * model.length)]! : next + 1;
        const at = model.indexOf(target);
        expect(queue.remove(target)).toBe(at === -1 ? null : target);
        if (at !== -1) model.splice(at, 1);
      }
      expect(queue.length).toBe(model.length);
    }
    while (model.length > 0) expect(queue.shift()).toBe(model.shift()!);
    expect(queue.length).toBe(0);
  }
});
