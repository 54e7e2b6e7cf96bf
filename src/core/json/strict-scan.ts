/**
 * A validating scan of JSON text as UTF-8 bytes: where a value ends, accepting exactly what JSON.parse
 * accepts (RFC 8259: its strings, escapes, numbers, literals and whitespace), without building anything.
 * The bytes must already be known to be valid UTF-8 and no deeper than MAX_JSON_DEPTH (parse.ts): the
 * scan checks JSON's grammar only. Every function returns the index just past what it read, or -1 when
 * the text is not JSON there.
 */

import { MAX_JSON_DEPTH } from "./parse";
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipWhitespace } from "./scan";

const MINUS = 0x2d,
  PLUS = 0x2b,
  DOT = 0x2e,
  ZERO = 0x30,
  NINE = 0x39;

export const NOT_JSON = -1;

const isDigit = (byte: number) => byte >= ZERO && byte <= NINE;
const isHex = (byte: number) => isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);

/** The escapes JSON has besides \u: " \ / b f n r t. */
const SIMPLE_ESCAPES = new Uint8Array(128);
for (const character of '"\\/bfnrt') SIMPLE_ESCAPES[character.charCodeAt(0)] = 1;

/**
 * What the last skipJsonString and skipJsonNumber saw, for a caller deciding whether JSON.stringify would
 * write the value back exactly as it was read. `stringEscaped`: the string holds an escape (one without
 * is written back as it is: raw control characters are not JSON, and JSON.stringify leaves every other
 * character alone). `numberPlain`: an integer with no sign on zero, no fraction or exponent, and at most
 * 15 digits, so exact.
 */
export const scanned = { stringEscaped: false, numberPlain: false };

/** From an opening quote to just past its closing quote. */
export function skipJsonString(bytes: Uint8Array, at: number): number {
  let hadEscape = false;
  for (let i = at + 1; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      scanned.stringEscaped = hadEscape;
      return i + 1;
    }
    if (byte < 0x20) return NOT_JSON;
    if (byte === BACKSLASH) {
      hadEscape = true;
      const escaped = bytes[++i];
      if (escaped === 0x75) {
        if (!(isHex(bytes[i + 1]) && isHex(bytes[i + 2]) && isHex(bytes[i + 3]) && isHex(bytes[i + 4]))) return NOT_JSON;
        i += 4;
      } else if (escaped === undefined || escaped >= 128 || SIMPLE_ESCAPES[escaped] === 0) return NOT_JSON;
    }
  }
  return NOT_JSON;
}

export function skipJsonNumber(bytes: Uint8Array, at: number): number {
  let i = at;
  if (bytes[i] === MINUS) i++;
  const digitsStart = i;
  if (bytes[i] === ZERO) i++;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return NOT_JSON;
  const integerEnd = i;
  if (bytes[i] === DOT) {
    if (!isDigit(bytes[++i])) return NOT_JSON;
    while (isDigit(bytes[i])) i++;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    if (!isDigit(bytes[i])) return NOT_JSON;
    while (isDigit(bytes[i])) i++;
  }
  const digits = integerEnd - digitsStart;
  scanned.numberPlain = i === integerEnd && digits <= 15 && !(digitsStart > at && bytes[digitsStart] === ZERO);
  return i;
}

const TRUE = [0x74, 0x72, 0x75, 0x65],
  FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65],
  NULL = [0x6e, 0x75, 0x6c, 0x6c];

function skipLiteral(bytes: Uint8Array, at: number, literal: readonly number[]): number {
  for (let k = 0; k < literal.length; k++) if (bytes[at + k] !== literal[k]) return NOT_JSON;
  return at + literal.length;
}

/** A scalar from its first byte: a string, a number, true, false or null. */
export function skipJsonScalar(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipJsonString(bytes, at);
  if (first === 0x74) return skipLiteral(bytes, at, TRUE);
  if (first === 0x66) return skipLiteral(bytes, at, FALSE);
  if (first === 0x6e) return skipLiteral(bytes, at, NULL);
  return skipJsonNumber(bytes, at);
}

/** Whether each open container is an object (1) or an array (0): the scan keeps no other state. */
const containers = new Uint8Array(MAX_JSON_DEPTH + 2);

/** A whole value from its first byte (no whitespace before it), containers included. */
export function skipJsonValue(bytes: Uint8Array, at: number): number {
  let depth = 0;
  let i = at;
  for (;;) {
    // a value starts at i
    const first = bytes[i];
    if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      const isObject = first === OPEN_BRACE;
      i = skipWhitespace(bytes, i + 1);
      if (bytes[i] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) i++;
      else {
        if (depth > MAX_JSON_DEPTH) return NOT_JSON;
        containers[depth++] = isObject ? 1 : 0;
        if (isObject) {
          i = memberValueStart(bytes, i);
          if (i === NOT_JSON) return NOT_JSON;
        }
        continue;
      }
    } else {
      i = skipJsonScalar(bytes, i);
      if (i === NOT_JSON) return NOT_JSON;
    }
    // after a value: close containers, or move on to the next element or member
    for (;;) {
      if (depth === 0) return i;
      i = skipWhitespace(bytes, i);
      const inObject = containers[depth - 1] === 1;
      const next = bytes[i];
      if (next === COMMA) {
        i = skipWhitespace(bytes, i + 1);
        if (inObject) {
          i = memberValueStart(bytes, i);
          if (i === NOT_JSON) return NOT_JSON;
        }
        break;
      }
      if (next !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return NOT_JSON;
      depth--;
      i++;
    }
  }
}

/** From a member's key (its opening quote) past the colon to its value's first byte. */
function memberValueStart(bytes: Uint8Array, at: number): number {
  if (bytes[at] !== QUOTE) return NOT_JSON;
  let i = skipJsonString(bytes, at);
  if (i === NOT_JSON) return NOT_JSON;
  i = skipWhitespace(bytes, i);
  if (bytes[i] !== COLON) return NOT_JSON;
  return skipWhitespace(bytes, i + 1);
}
