/**
 * The depth check over 10 MB bodies made like the utilities benchmark's: the byte scan in JavaScript,
 * the former scan over the decoded text (kept here only, for the comparison) and the WebAssembly SIMD
 * scan that replaced both. Medians of 15 runs. `bun bench/experiments/depth-scan.ts`
 */

import { simdDepthCheck } from "../../src/core/json/depth-scan";
import { exceedsDepthInJavaScript, MAX_JSON_DEPTH } from "../../src/core/json/parse";
import { MB } from "../lib/data";
import { CASES } from "../utilities";

const RUNS = 15;
const QUOTE = 0x22,
  OPEN_BRACE = 0x7b,
  OPEN_BRACKET = 0x5b,
  CLOSE_BRACE = 0x7d,
  CLOSE_BRACKET = 0x5d,
  BACKSLASH = 0x5c;

/** The check parseJsonBytes ran before the SIMD scan: over the text, skipping string bodies with indexOf. */
function textExceedsDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      for (;;) {
        const close = text.indexOf('"', i + 1);
        if (close === -1) return false;
        let before = close - 1;
        while (text.charCodeAt(before) === BACKSLASH) before--;
        i = close;
        if ((close - 1 - before) % 2 === 0) break;
      }
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

function median(run: () => boolean, expected: boolean): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    if (run() !== expected) throw new Error("the scans disagree");
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[RUNS >> 1];
}

const simd = simdDepthCheck();
if (!simd) throw new Error("no WebAssembly SIMD in this runtime");
console.log(`load average: ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
console.log("case         MB    JS bytes  JS text  SIMD   (median ms of 15)");
for (const label of ["pick-fields", "deep-merge", "csv-to-json"]) {
  const text = JSON.stringify(CASES.find((c) => c.label === label)!.body(10 * MB));
  const bytes = new TextEncoder().encode(text);
  const expected = exceedsDepthInJavaScript(bytes);
  const cells = [
    median(() => exceedsDepthInJavaScript(bytes), expected),
    median(() => textExceedsDepth(text), expected),
    median(() => simd(bytes, MAX_JSON_DEPTH), expected),
  ];
  console.log(
    `${label.padEnd(12)} ${(bytes.length / MB).toFixed(1).padStart(4)}  ${cells.map((ms) => ms.toFixed(2).padStart(7)).join("  ")}`,
  );
}
