/**
 * A byte scanner over a utility request `{ "inputs": { "primary": [ … ] }, … }` that finds the span
 * of `inputs.primary` and splits that array into the spans of its elements, without decoding or
 * parsing anything but member names. It checks structure only as far as it must to find boundaries:
 * every byte it does not check itself lies in a span that the caller hands to JSON.parse, so malformed
 * text is always caught. Anything unusual (a duplicate member, `primary` not an array, a broken
 * bracket) gives `undefined`: the caller then takes the ordinary whole-document path, which produces
 * today's answers and error messages.
 */

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, COLON = 0x3a;
const OPEN_BRACE = 0x7b, CLOSE_BRACE = 0x7d, OPEN_BRACKET = 0x5b, CLOSE_BRACKET = 0x5d;

export interface Span {
  start: number;
  end: number;
}

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function skipWhitespace(bytes: Uint8Array, at: number): number {
  while (at < bytes.length && isWhitespace(bytes[at])) at++;
  return at;
}

/** `at` is on an opening quote; the index after the closing one, or -1. */
function skipString(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i + 1;
  }
  return -1;
}

/** The index after the value that starts at `at` (a string, a nested object/array, or a scalar), or -1. */
function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipString(bytes, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < bytes.length; i++) {
      const byte = bytes[i];
      if (byte === QUOTE) {
        i = skipString(bytes, i) - 1;
        if (i < 0) return -1;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = at;
  while (i < bytes.length && !isWhitespace(bytes[i]) && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACE && bytes[i] !== CLOSE_BRACKET) i++;
  return i > at ? i : -1;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The members of the object at `at`, by name, with the span of each value; undefined on any doubt. */
function objectMembers(bytes: Uint8Array, at: number): { members: Map<string, Span>; end: number } | undefined {
  if (bytes[at] !== OPEN_BRACE) return undefined;
  const members = new Map<string, Span>();
  let i = skipWhitespace(bytes, at + 1);
  if (bytes[i] === CLOSE_BRACE) return { members, end: i + 1 };
  for (;;) {
    if (bytes[i] !== QUOTE) return undefined;
    const nameEnd = skipString(bytes, i);
    if (nameEnd < 0) return undefined;
    let name: string;
    try {
      name = JSON.parse(decoder.decode(bytes.subarray(i, nameEnd))) as string;
    } catch {
      return undefined;
    }
    i = skipWhitespace(bytes, nameEnd);
    if (bytes[i] !== COLON) return undefined;
    const start = skipWhitespace(bytes, i + 1);
    const end = skipValue(bytes, start);
    // a repeated name: JSON.parse keeps the last one; rather than mirror that, leave it to JSON.parse
    if (end < 0 || members.has(name)) return undefined;
    members.set(name, { start, end });
    i = skipWhitespace(bytes, end);
    if (bytes[i] === CLOSE_BRACE) return { members, end: i + 1 };
    if (bytes[i] !== COMMA) return undefined;
    i = skipWhitespace(bytes, i + 1);
  }
}

/** The span of `inputs.primary` when the body is an object whose `inputs.primary` is an array. */
export function primaryArraySpan(bytes: Uint8Array): Span | undefined {
  const body = objectMembers(bytes, skipWhitespace(bytes, 0));
  if (!body || skipWhitespace(bytes, body.end) !== bytes.length) return undefined;
  const inputs = body.members.get("inputs");
  const primary = inputs && objectMembers(bytes, inputs.start)?.members.get("primary");
  return primary && bytes[primary.start] === OPEN_BRACKET ? primary : undefined;
}

/**
 * The spans of the elements of the array at `array`, in order; undefined when its structure is off
 * (an empty element, a trailing comma). Each span still has to pass JSON.parse.
 */
export function elementSpans(bytes: Uint8Array, array: Span): Span[] | undefined {
  const spans: Span[] = [];
  let i = skipWhitespace(bytes, array.start + 1);
  if (bytes[i] === CLOSE_BRACKET) return i + 1 === array.end ? spans : undefined;
  for (;;) {
    const end = skipValue(bytes, i);
    if (end < 0) return undefined;
    spans.push({ start: i, end });
    const next = skipWhitespace(bytes, end);
    if (bytes[next] === CLOSE_BRACKET) return next + 1 === array.end ? spans : undefined;
    if (bytes[next] !== COMMA) return undefined;
    i = skipWhitespace(bytes, next + 1);
  }
}
