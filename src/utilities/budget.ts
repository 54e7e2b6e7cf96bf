/**
 * The output budget of one run: every operation whose result can outgrow its input charges what it
 * builds here as it builds it, so a small request that would build gigabytes stops at the limit instead
 * of after the allocation. Charges are the JSON bytes the built values will serialise to (near enough:
 * string lengths in UTF-16 units, numbers by their digits), never measured by serialising.
 */

/** The run built more than its budget allows: 413 `result_too_large` at the HTTP edge. */
export class ResultTooLargeError extends Error {
  override name = "ResultTooLargeError";
  constructor(readonly limitBytes: number) {
    super(`The result would be larger than the output limit of ${limitBytes} bytes`);
  }
}

export class OutputBudget {
  private used = 0;

  /** `work`: the run's work budget, which utilities evaluating expressions pass on (an inline run has one) */
  constructor(
    readonly limitBytes: number,
    readonly work?: WorkBudget,
  ) {}

  /** Counts `bytes` more of output; throws once the total passes the limit. */
  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limitBytes) throw new ResultTooLargeError(this.limitBytes);
  }

  /** Charges a copy of `value` about to be made, measuring it no further than the budget that is left. */
  chargeCopyOf(value: unknown): void {
    this.charge(jsonSizeOf(value, this.limitBytes - this.used));
  }

  get usedBytes(): number {
    return this.used;
  }
}

/** A budget that never refuses, for callers that bound their output some other way (tests, CLI helpers). */
export const unlimitedBudget = (): OutputBudget => new OutputBudget(Number.POSITIVE_INFINITY);

/**
 * The serialised size of a JSON value, for charging a copy of it. Walks the value once and stops as soon
 * as the total passes `stopAbove`, so measuring a huge value costs no more than the budget it exceeds.
 */
export function jsonSizeOf(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  // a leaf, the usual case per value of a record-wise utility, without a stack to allocate
  if (typeof value === "string") return value.length + 2;
  if (typeof value !== "object" || value === null) return typeof value === "number" ? 8 : 5;
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= stopAbove) {
    const next = stack.pop();
    if (typeof next === "string") total += next.length + 2;
    else if (typeof next === "number") total += 8;
    else if (typeof next === "boolean" || next === null || next === undefined) total += 5;
    else if (Array.isArray(next)) {
      total += 1 + next.length;
      for (const element of next) stack.push(element);
    } else {
      const record = next as Record<string, unknown>;
      total += 1;
      for (const key of Object.keys(record)) {
        total += key.length + 4;
        stack.push(record[key]);
      }
    }
  }
  return total;
}

/**
 * The run used up its work budget: on the main thread, its share of the event loop. Not an answer: the
 * engine stops the inline run there and does the same, pure, run again in a worker.
 */
export class WorkBudgetExceededError extends Error {
  override name = "WorkBudgetExceededError";
  constructor(readonly limitMs: number) {
    super(`The run took more than its inline budget of ${limitMs} ms`);
  }
}

/**
 * The time one run (every step of a pipeline together) may hold the thread it runs on, checked as it
 * goes: by the expression language at each evaluation and at each string or array it builds (the work
 * a small request can multiply), and by the engine between steps. Everything else a utility does on an
 * inline input is bounded by that input's size. Wall-clock time is what the event loop loses, and a run
 * on the main thread is synchronous, so nothing else runs within it.
 */
export class WorkBudget {
  private readonly deadline: number;

  constructor(
    readonly limitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.deadline = now() + limitMs;
  }

  /** Throws once the run has used its time. */
  check(): void {
    if (this.now() > this.deadline) throw new WorkBudgetExceededError(this.limitMs);
  }
}
