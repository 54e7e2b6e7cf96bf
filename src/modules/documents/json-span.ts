/**
 * Finds the exact bytes of one member's value in a JSON object text, so that create stores `content`
 * as written (integers beyond 2^53, `1.0`, `-0`, key order) instead of what JSON.parse made of it.
 * The text has already been parsed successfully, so the scanner may assume it is well formed.
 */

const QUOTE = 0x22, BACKSLASH = 0x5c, OPEN_BRACE = 0x7b, CLOSE_BRACE = 0x7d, OPEN_BRACKET = 0x5b, CLOSE_BRACKET = 0x5d, COMMA = 0x2c, COLON = 0x3a;
const decoder = new TextDecoder();

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

export function skipWhitespace(bytes: Uint8Array, at: number): number {
  while (at < bytes.length && isWhitespace(bytes[at])) at++;
  return at;
}

/** From an opening quote to just past its closing quote. */
export function skipString(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    if (bytes[i] === BACKSLASH) i++;
    else if (bytes[i] === QUOTE) return i + 1;
  }
  return bytes.length;
}

/** From the first byte of a value to just past its last byte. */
export function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipString(bytes, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < bytes.length; i++) {
      const byte = bytes[i];
      if (byte === QUOTE) i = skipString(bytes, i) - 1;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return bytes.length;
  }
  let i = at;
  while (i < bytes.length && !isWhitespace(bytes[i]) && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE && bytes[i] !== CLOSE_BRACKET) i++;
  return i;
}

/**
 * The value bytes of the member `name` of the top-level object, or undefined when there is none.
 * With duplicate names the last one wins, as in JSON.parse.
 */
export function memberValueSpan(bytes: Uint8Array, name: string): Uint8Array | undefined {
  let at = skipWhitespace(bytes, 0);
  if (bytes[at] !== OPEN_BRACE) return undefined;
  at = skipWhitespace(bytes, at + 1);
  let found: Uint8Array | undefined;
  while (bytes[at] === QUOTE) {
    const keyEnd = skipString(bytes, at);
    const key = JSON.parse(decoder.decode(bytes.subarray(at, keyEnd))) as string;
    at = skipWhitespace(bytes, keyEnd);
    if (bytes[at] !== COLON) return undefined;
    const valueStart = skipWhitespace(bytes, at + 1);
    const valueEnd = skipValue(bytes, valueStart);
    if (key === name) found = bytes.subarray(valueStart, valueEnd);
    at = skipWhitespace(bytes, valueEnd);
    if (bytes[at] !== COMMA) break;
    at = skipWhitespace(bytes, at + 1);
  }
  return found;
}
