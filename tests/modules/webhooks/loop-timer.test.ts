/**
 * The delivery loop's pauses are computed from the clock, which moves between the check and the timer:
 * a wait that ran out in between must not become a negative timer (the runtime then prints a
 * TimeoutNegativeWarning, as a node restarted over a backlog did). The clock is made to jump 13 ms per
 * read, so the turn spacing (25 ms) left after the check is always gone by the timer.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startDeliverer } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
});
afterAll(async () => {
  await t.close();
});

test("the loop never sets a negative timer, however far the clock moves between two reads", async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  const realNow = performance.now.bind(performance);
  const deliverer = startDeliverer(t);
  let clock = realNow();
  performance.now = () => (clock += 13);
  try {
    for (let turn = 0; turn < 20; turn++) {
      deliverer.wake();
      await Bun.sleep(10);
    }
  } finally {
    performance.now = realNow;
    await deliverer.stop();
    process.off("warning", onWarning);
  }
  expect(warnings).not.toContain("TimeoutNegativeWarning");
});
