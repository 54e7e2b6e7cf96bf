/** InlineCooldown: which accounts' runs skip the main thread, for how long, and how many are remembered. */
import { expect, test } from "bun:test";
import { INLINE_COOLDOWN_MS, InlineCooldown } from "../../../src/modules/utilities/inline-cooldown";

test("an account is in its cooldown from the run that passed the budget until INLINE_COOLDOWN_MS later", () => {
  const cooldown = new InlineCooldown();
  expect(cooldown.active("a", 0)).toBe(false);
  cooldown.start("a", 1_000);
  expect(cooldown.active("a", 1_000)).toBe(true);
  expect(cooldown.active("b", 1_000)).toBe(false);
  expect(cooldown.active("a", 1_000 + INLINE_COOLDOWN_MS - 1)).toBe(true);
  expect(cooldown.active("a", 1_000 + INLINE_COOLDOWN_MS)).toBe(false);
  // a new budget stop starts it again
  cooldown.start("a", 5_000);
  expect(cooldown.active("a", 5_500)).toBe(true);
});

test("at most 10,000 accounts are remembered: past that the oldest is forgotten", () => {
  const cooldown = new InlineCooldown(60_000);
  for (let i = 0; i <= 10_000; i++) cooldown.start(`account${i}`, 0);
  expect(cooldown.active("account0", 1)).toBe(false);
  expect(cooldown.active("account1", 1)).toBe(true);
  expect(cooldown.active("account10000", 1)).toBe(true);
});
