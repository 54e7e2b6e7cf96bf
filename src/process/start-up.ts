/**
 * Start-up steps: a step that fails ends the start with one line naming its cause (no stack trace), after
 * stopping, in reverse order, what the steps before it started (the embedded PostgreSQL above all), and
 * exit code 1.
 */
export class StartUp {
  /** how to stop what start-up has started so far, in the order it started */
  private readonly stops: (() => unknown)[] = [];

  constructor(private readonly exit: (code: number) => never = (code) => process.exit(code)) {}

  /** Remembers how to stop what a step started, should a later step fail. */
  stopOnFailure(stop: () => unknown): void {
    this.stops.push(stop);
  }

  /** Ends a failed start: what was started is stopped, then one line and exit 1. */
  async fail(line: string): Promise<never> {
    for (const stop of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch {
        // the start already failed: its cause is the line worth printing
      }
    }
    console.error(`kiln: ${line}`);
    return this.exit(1);
  }

  /** Runs a step; its failure ends the start with the line `explain` gives. */
  async step<T>(run: () => T | Promise<T>, explain: (error: unknown) => string | Promise<string>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      return this.fail(await explain(error));
    }
  }
}

/** The line of a step that failed with an unexpected error. */
export const failed = (what: string) => (error: unknown) => `${what} failed: ${(error as Error)?.message ?? String(error)}`;

/** The URL without its password, for messages. */
export const redacted = (url: string) => url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
