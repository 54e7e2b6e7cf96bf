/**
 * Where log lines go: standard output, written in batches. Lines of one event-loop turn are joined and
 * written once, after the turn (or at once past 64 KiB), so a busy server makes one write per turn
 * rather than one per request. What is pending when the process exits
 * is written synchronously then; a SIGKILL can lose the lines of the last turn.
 */
import { writeSync } from "node:fs";

const FLUSH_AT_CHARS = 64 * 1024;

export function batchedStdout(): (line: string) => void {
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    process.stdout.write(text);
  };
  process.once("exit", () => {
    if (pending !== "") writeSync(1, pending);
    pending = "";
  });
  return (line) => {
    pending += line + "\n";
    if (pending.length >= FLUSH_AT_CHARS) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
