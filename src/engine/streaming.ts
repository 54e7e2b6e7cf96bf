/**
 * Record-wise runs over a large array, a batch of elements at a time. The input's bytes are split into
 * element spans (elementSpans, http/json-scan.ts); batches of about 256 KiB of elements are decoded,
 * parsed, transformed and serialised on their own, and the output is written as UTF-8 into 1 MiB
 * chunks. So a run holds the input bytes once, the output bytes once, and one batch's objects at a
 * time, instead of the decoded input text, the whole input's and output's object graphs and the output
 * text (bench/README.md, "Memory").
 *
 * The output is complete before the response starts, so an element that fails still gives a clean 400.
 * On anything unexpected (malformed JSON, a failing element, a config that needs the whole input) the
 * caller takes the whole-document path, which gives exactly its usual answer or error.
 */

import { decodeUtf8, exceedsDepth } from "../core/json/parse";
import { elementSpans } from "../core/json/scan";
import { type OutputBudget, ResultTooLargeError } from "../utilities/budget";
import type { Utility } from "../utilities/types";
import type { RunResult } from "./run-result";

/**
 * Streaming pays for a scan of every byte in JavaScript (the element boundaries), which costs about as
 * much CPU as decoding and parsing the whole input natively: it is worth it where memory is at stake,
 * not for the few hundred MiB a run below this size takes on the whole-document path.
 */
export const STREAM_MIN_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;
/** Elements are parsed and serialised in batches of about this many bytes: one call per element costs more. */
const BATCH_BYTES = 256 * 1024;

const encoder = new TextEncoder();

/** Appends text as UTF-8 to a list of fixed-size chunks. */
class ChunkWriter {
  readonly chunks: Uint8Array[] = [];
  private chunk = new Uint8Array(CHUNK_BYTES);
  private used = 0;

  write(text: string): void {
    for (let rest = text; ; ) {
      const { read, written } = encoder.encodeInto(rest, this.chunk.subarray(this.used));
      this.used += written;
      if (read === rest.length) return;
      rest = rest.slice(read);
      this.seal();
      // 3 bytes per UTF-16 unit always suffice
      this.chunk = new Uint8Array(Math.max(CHUNK_BYTES, rest.length * 3));
    }
  }

  finish(): Uint8Array[] {
    this.seal();
    return this.chunks;
  }

  private seal(): void {
    if (this.used > 0) this.chunks.push(this.chunk.slice(0, this.used));
    this.used = 0;
  }
}

/**
 * One step of `utility` (its config validated) over the array JSON text `bytes`, streamed; undefined
 * when it must take the whole-document path: the utility has no per-record form for this config, the
 * input is below `minBytes` or not an array, or anything fails.
 */
export function runStreamed(
  utility: Utility,
  config: Record<string, unknown>,
  bytes: Uint8Array,
  budget: OutputBudget,
  minBytes = STREAM_MIN_BYTES,
): RunResult | undefined {
  if (!utility.recordWise || bytes.byteLength < minBytes || exceedsDepth(bytes)) return undefined;
  const elements = elementSpans(bytes);
  if (!elements) return undefined;
  try {
    const transform = utility.recordWise(config, budget);
    if (!transform) return undefined;
    const started = performance.now();
    const output = new ChunkWriter();
    output.write("[");
    let collectAt = COLLECT_EVERY_BYTES;
    for (let first = 0; first < elements.length; ) {
      // a batch of elements up to BATCH_BYTES, parsed and serialised in one call each
      let last = first;
      while (last + 1 < elements.length && elements[last + 1].end - elements[first].start <= BATCH_BYTES) last++;
      const text = decodeUtf8(bytes.subarray(elements[first].start, elements[last].end));
      if (text === undefined) return undefined;
      const records = JSON.parse(`[${text}]`) as unknown[];
      if (records.length !== last - first + 1) return undefined;
      const outputs = records.map((record, offset) => transform(record, first + offset));
      if (first > 0) output.write(",");
      const json = JSON.stringify(outputs);
      budget.charge(json.length);
      output.write(json.slice(1, -1));
      if (elements[last].end >= collectAt) {
        // each batch leaves its text and objects behind; without a nudge the heap grows by several
        // times the input before the collector runs (peak growth 7.3× the input without, 3.5× with)
        Bun.gc(false);
        collectAt = elements[last].end + COLLECT_EVERY_BYTES;
      }
      first = last + 1;
    }
    output.write("]");
    const durationMs = performance.now() - started;
    return { outputChunks: output.finish(), durationMs, stepDurationsMs: [durationMs] };
  } catch (error) {
    // an output over the limit would be over it on the whole-document path too
    if (error instanceof ResultTooLargeError) throw error;
    return undefined;
  }
}
