/**
 * Byte-level scanning of JSON text: where values start and end, without parsing them. Used to find
 * members of a large body (or document) so that only the small ones are parsed.
 */

import { ERRORS } from "../error-codes";
import { httpError } from "../errors";
import { parseJsonBytes } from "./parse";

/** The bytes of JSON's structure, shared with the lossless tree (tree.ts). */
export const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  OPEN_BRACE = 0x7b,
  CLOSE_BRACE = 0x7d,
  OPEN_BRACKET = 0x5b,
  CLOSE_BRACKET = 0x5d,
  COMMA = 0x2c,
  COLON = 0x3a;

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

const malformed = (at: number) => httpError(ERRORS.malformed_json, `Malformed JSON: unexpected input at byte ${at}`);

function keyOf(text: Uint8Array, at: number): string {
  const parsed = parseJsonBytes(text);
  if (!parsed.ok || typeof parsed.value !== "string") throw malformed(at);
  return parsed.value;
}

/**
 * The members of the JSON object text, as value spans, checking the object's own syntax (each value
 * is checked when it is parsed). undefined when the text is not an object. Duplicates: the last wins.
 */
export function memberSpans(bytes: Uint8Array): Map<string, Uint8Array> | undefined {
  let at = skipWhitespace(bytes, 0);
  if (bytes[at] !== OPEN_BRACE) return undefined;
  const members = new Map<string, Uint8Array>();
  at = skipWhitespace(bytes, at + 1);
  if (bytes[at] === CLOSE_BRACE) at++;
  else {
    for (;;) {
      if (bytes[at] !== QUOTE) throw malformed(at);
      const keyEnd = skipString(bytes, at);
      const key = keyOf(bytes.subarray(at, keyEnd), at);
      at = skipWhitespace(bytes, keyEnd);
      if (bytes[at] !== COLON) throw malformed(at);
      const start = skipWhitespace(bytes, at + 1);
      const end = skipValue(bytes, start);
      if (end === start) throw malformed(start);
      members.set(key, bytes.subarray(start, end));
      at = skipWhitespace(bytes, end);
      if (bytes[at] === COMMA) {
        at = skipWhitespace(bytes, at + 1);
        continue;
      }
      if (bytes[at] !== CLOSE_BRACE) throw malformed(at);
      at++;
      break;
    }
  }
  if (skipWhitespace(bytes, at) !== bytes.length) throw malformed(at);
  return members;
}

/**
 * The element spans of the JSON array text `bytes` (surrounding whitespace allowed), in order, without
 * parsing them; undefined when it is not an array or its own structure is off (an empty element, a
 * trailing comma, anything after it). The scan only finds boundaries: each span, and whatever lies
 * between the spans a caller parses together, must still pass JSON.parse.
 */
export function elementSpans(bytes: Uint8Array): { start: number; end: number }[] | undefined {
  let at = skipWhitespace(bytes, 0);
  if (bytes[at] !== OPEN_BRACKET) return undefined;
  const spans: { start: number; end: number }[] = [];
  at = skipWhitespace(bytes, at + 1);
  if (bytes[at] !== CLOSE_BRACKET) {
    for (;;) {
      const end = skipValue(bytes, at);
      if (end === at || end >= bytes.length) return undefined;
      spans.push({ start: at, end });
      at = skipWhitespace(bytes, end);
      if (bytes[at] === CLOSE_BRACKET) break;
      if (bytes[at] !== COMMA) return undefined;
      at = skipWhitespace(bytes, at + 1);
    }
  }
  return skipWhitespace(bytes, at + 1) === bytes.length ? spans : undefined;
}
