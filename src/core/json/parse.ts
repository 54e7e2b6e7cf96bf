/**
 * JSON text checks shared by the HTTP layer and the utility workers.
 */
import { simdDepthCheck } from "./depth-scan";

/** Deepest nesting Kiln accepts in any JSON body. Recursive code (utilities, TypeBox) is safe below it. */
export const MAX_JSON_DEPTH = 10_000;

const OPEN_BRACE = 0x7b,
  OPEN_BRACKET = 0x5b,
  CLOSE_BRACE = 0x7d,
  CLOSE_BRACKET = 0x5d,
  QUOTE = 0x22,
  BACKSLASH = 0x5c;

/**
 * Whether the JSON text nests deeper than `limit`: one linear pass over the bytes, counting brackets
 * outside strings, so the check itself cannot overflow a stack. In WebAssembly SIMD where the runtime
 * has it (depth-scan.wat, several times faster: bench/experiments/README.md, "Depth check in WebAssembly SIMD"),
 * else in JavaScript; the answers are the same.
 */
export function exceedsDepth(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  return (simdDepthCheck() ?? exceedsDepthInJavaScript)(bytes, limit);
}

/** The byte scan in JavaScript: the fallback, and the reference the SIMD scan is tested against. */
export function exceedsDepthInJavaScript(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
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

const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * The bytes as text when they are valid UTF-8, else undefined. Bun's fatal decoder is as fast as a
 * lenient decoding and a search of its text for U+FFFD on ASCII, and faster on other text
 * (bench/README.md, Utilities).
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

export type ParsedJson = { ok: true; value: unknown; text: string } | { ok: false; message: string };

/**
 * Strict UTF-8 decoding, a depth check, then JSON.parse; every failure is a message a person can act on.
 * The depth is checked on the bytes, the decoded text would give the same answer: the decoder only drops
 * a leading BOM, and brackets, quotes and backslashes are ASCII, never part of a multi-byte character.
 */
export function parseJsonBytes(bytes: Uint8Array): ParsedJson {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, message: "Malformed JSON: the body is not valid UTF-8" };
  if (exceedsDepth(bytes)) return { ok: false, message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted` };
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
