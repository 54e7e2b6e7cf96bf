/**
 * Finds the exact bytes of one member's value in a JSON object text, so that create stores `content`
 * as written (integers beyond 2^53, `1.0`, `-0`, key order) instead of what JSON.parse made of it.
 * The text has already been parsed successfully, so the scanner may assume it is well formed.
 */

import { skipString, skipValue, skipWhitespace } from "../../http/json-scan";

const QUOTE = 0x22, OPEN_BRACE = 0x7b, COMMA = 0x2c, COLON = 0x3a;
const decoder = new TextDecoder();

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
