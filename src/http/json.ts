/**
 * JSON text checks shared by the HTTP layer and the utility workers.
 */

/** Deepest nesting Kiln accepts in any JSON body. Recursive code (utilities, TypeBox) is safe below it. */
export const MAX_JSON_DEPTH = 10_000;

const OPEN_BRACE = 0x7b, OPEN_BRACKET = 0x5b, CLOSE_BRACE = 0x7d, CLOSE_BRACKET = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c;

/**
 * Whether the JSON text nests deeper than `limit`: one linear pass over the bytes, counting brackets
 * outside strings, so the check itself cannot overflow a stack.
 */
export function exceedsDepth(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * exceedsDepth over decoded text, which parsing needs anyway: the same answer (brackets, quotes and
 * backslashes are ASCII, never part of a multi-byte character), about twice as fast, because a string's
 * body is skipped by the native indexOf instead of a JavaScript step per character (10 MB of records,
 * 810,000 strings: 9–12 ms against 14–18 ms, bench/README.md "Utilities at 10 MB: where Kiln's extra time went").
 */
export function textExceedsDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      // to the closing quote: the next quote not escaped by an odd run of backslashes
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

const decoder = new TextDecoder("utf-8", { fatal: true });

export type ParsedJson = { ok: true; value: unknown; text: string } | { ok: false; message: string };

/** Strict UTF-8 decoding, a depth check, then JSON.parse; every failure is a message a person can act on. */
export function parseJsonBytes(bytes: Uint8Array): ParsedJson {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, message: "Malformed JSON: the body is not valid UTF-8" };
  }
  if (textExceedsDepth(text)) return { ok: false, message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted` };
  try {
    return { ok: true, value: JSON.parse(text), text };
  } catch (error) {
    return { ok: false, message: `Malformed JSON: ${(error as Error).message}` };
  }
}

/** JSON text this server produced itself (JSON.stringify of a value): stored without being checked again. */
export class CheckedJson {
  constructor(readonly bytes: Uint8Array) {}
}
