/** What a run takes in and gives back, shared by the main thread, the streaming path and the worker. */

/**
 * An input of a run: JSON text still to be parsed (a span of the request body, or a stored document's
 * bytes, which a worker receives as transferred bytes), or a value the main thread already parsed.
 */
export type Source = { json: Uint8Array } | { value: unknown };

/**
 * The output as JSON text, so that a worker's answer is never parsed again on the main thread, or, for
 * a streamed record-wise run (./streaming.ts), as UTF-8 chunks of the same bytes.
 */
export type RunResult = ({ outputJson: string } | { outputChunks: Uint8Array[] }) & {
  /** the whole run: parsing the inputs, every step, serialising the output */
  durationMs: number;
  /** each step's own execution time */
  stepDurationsMs: number[];
};
