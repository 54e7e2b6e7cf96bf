/** The one shape of background work: periodic ticks never overlap, a list starts in order and stops in reverse. */
import { describe, expect, test } from "bun:test";
import { type BackgroundWork, every, startInOrder, Wakeable } from "../../src/core/background";

test("every: a tick still running when the next is due makes that one skip, and stop() waits for it", async () => {
  let running = 0;
  let most = 0;
  let ticks = 0;
  let finished = 0;
  const loop = every(
    5,
    async () => {
      ticks++;
      most = Math.max(most, ++running);
      await Bun.sleep(40);
      running--;
      finished++;
    },
    { immediately: true },
  );
  await Bun.sleep(100);
  await loop.stop();
  expect(most).toBe(1);
  expect(ticks).toBeGreaterThanOrEqual(2);
  expect(finished).toBe(ticks);
  await Bun.sleep(30);
  expect(ticks).toBe(finished); // no tick after stop()
});

test("every: without `immediately` the first tick comes after one interval; a failed tick does not stop the loop", async () => {
  let ticks = 0;
  const loop = every(20, async () => {
    ticks++;
    throw new Error("this tick fails");
  });
  expect(ticks).toBe(0);
  await Bun.sleep(75);
  await loop.stop();
  expect(ticks).toBeGreaterThanOrEqual(2);
});

const recorded = (log: string[], name: string, options: { failStart?: boolean } = {}): BackgroundWork => ({
  name,
  clusterOnce: ["per node"],
  start() {
    if (options.failStart) throw new Error(`${name} cannot start`);
    log.push(`start ${name}`);
    return {
      async stop() {
        log.push(`stop ${name}`);
        await Bun.sleep(10);
        log.push(`stopped ${name}`);
      },
    };
  },
});

test("startInOrder: started in order, asked to stop in reverse all at once, resolved when every one has stopped", async () => {
  const log: string[] = [];
  const running = startInOrder(["a", "b", "c"].map((name) => recorded(log, name)));
  expect(log).toEqual(["start a", "start b", "start c"]);
  await running.stop();
  expect(log.slice(3, 6)).toEqual(["stop c", "stop b", "stop a"]);
  expect(log.slice(6).sort()).toEqual(["stopped a", "stopped b", "stopped c"]);
});

test("startInOrder: a start that throws stops those already started and throws its error", async () => {
  const log: string[] = [];
  expect(() => startInOrder([recorded(log, "a"), recorded(log, "b"), recorded(log, "c", { failStart: true })])).toThrow("c cannot start");
  await Bun.sleep(30);
  expect(log).toEqual(["start a", "start b", "stop b", "stop a", "stopped b", "stopped a"]);
});

describe("Wakeable", () => {
  test("a wake ends the pause at once and is remembered until cleared; a negative pause is none", async () => {
    const waker = new Wakeable();
    const started = performance.now();
    const paused = waker.pause(10_000);
    setTimeout(waker.wake, 20);
    await paused;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(waker.woken).toBe(true);
    waker.woken = false;
    waker.wake(); // no pause under way: only remembered
    expect(waker.woken).toBe(true);
    const at = performance.now();
    await waker.pause(-50);
    expect(performance.now() - at).toBeLessThan(1_000);
  });
});
