/**
 * The accounts whose inline run recently passed UTILITY_INLINE_BUDGET_MS. Their runs go straight to a
 * worker for a while: the budget bounds one run's hold on the event loop, and this bounds what one
 * tenant holds when it sends many such runs at once (each would otherwise take its budget on the
 * main thread before moving: 16 connections, a 277 ms stall for the others). It lasts from the budget
 * stop until INLINE_COOLDOWN_MS after that run ended in its worker.
 */

/** How long an account's runs skip the main thread after one passed its budget (and after that one ended in its worker). */
export const INLINE_COOLDOWN_MS = 1_000;
/** Accounts remembered at most; past it the oldest is forgotten (its runs start inline again). */
const MAX_ACCOUNTS = 10_000;

export class InlineCooldown {
  private readonly until = new Map<string, number>();

  constructor(private readonly cooldownMs = INLINE_COOLDOWN_MS) {}

  /** Whether the account's runs go to a worker now. */
  active(accountId: string, now: number): boolean {
    const until = this.until.get(accountId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(accountId);
    return false;
  }

  /** The account's run passed its budget at `now`. */
  start(accountId: string, now: number): void {
    this.until.delete(accountId);
    this.until.set(accountId, now + this.cooldownMs);
    if (this.until.size > MAX_ACCOUNTS) this.until.delete(this.until.keys().next().value!);
  }
}
