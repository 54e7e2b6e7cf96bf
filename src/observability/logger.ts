/**
 * The process's log: one line per event, JSON (or a line for a person at a terminal, LOG_FORMAT=pretty),
 * below LOG_LEVEL dropped. Requests and background work write to the same one; never a key or a body.
 */
import type { LogFormat, LogLevel } from "../config";
import { batchedStdout } from "../server/log-writer";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  log(level: Exclude<LogLevel, "silent">, message: string, fields?: Record<string, unknown>): void;
  /** whether a line at `level` would be written: a caller can skip building fields that would be dropped */
  enabled?(level: Exclude<LogLevel, "silent">): boolean;
}

export function createLogger(level: LogLevel, write: (line: string) => void = batchedStdout(), format: LogFormat = "json"): Logger {
  const threshold = LEVELS[level];
  const render = format === "pretty" ? prettyLine : jsonLine;
  return {
    log(lvl, message, fields = {}) {
      if (LEVELS[lvl] < threshold) return;
      write(render(new Date().toISOString(), lvl, message, fields));
    },
    enabled: (lvl) => LEVELS[lvl] >= threshold,
  };
}

function jsonLine(time: string, level: string, message: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ time, level, msg: message, ...fields });
}

/** For a person at a terminal: time, level, message, then the fields as key=value (strings JSON-quoted only when they hold spaces). */
function prettyLine(time: string, level: string, message: string, fields: Record<string, unknown>): string {
  const parts = [time.slice(11, 23), level.toUpperCase().padEnd(5), message];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = typeof value === "string" && !/[\s"]/.test(value) ? value : JSON.stringify(value);
    parts.push(`${key}=${text}`);
  }
  return parts.join(" ");
}
