/**
 * structure.pick-fields over the input's JSON text, without parsing it: the members a path picks are
 * copied as bytes, the others only checked and skipped. JSON.parse of the whole input, building every
 * record, and JSON.stringify of the output cost several times what one validating pass over the bytes
 * costs (bench/README.md, "Pick-fields over the text").
 *
 * The answer is byte for byte what JSON.stringify(pickFields(JSON.parse(text))) gives, or undefined, and
 * the engine then takes that usual path, which gives its usual answer or error. Undefined for: text that
 * is not JSON; a top level that is not an object or an array of objects; a
 * picked key that appears twice in one object (JSON.parse keeps the last value at the first one's place);
 * a path that continues into an array. Picked values that JSON.stringify would write differently from
 * their text (escapes, fractions and exponents, long integers, -0, containers with their whitespace) are
 * parsed and written again one by one; the rest are copied.
 */
import { decodeUtf8 } from "../../core/json/parse";
import { CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipWhitespace } from "../../core/json/scan";
import { NOT_JSON, scanned, skipJsonScalar, skipJsonString, skipJsonValue } from "../../core/json/strict-scan";
import type { PathNode } from "./paths";

/** The text path declines a valid input it does not cover (NOT_JSON declines an invalid one). */
const DECLINED = -2;

/** A literal path trie (no wildcard) as the text path follows it. */
export interface TextPathNode {
  terminal: boolean;
  children: TextPathChild[];
  byName: Map<string, TextPathChild>;
}

interface TextPathChild {
  name: string;
  /** the name as UTF-8, to compare with a key that has no escape */
  raw: Uint8Array;
  /** `"name":` as JSON.stringify writes it */
  member: Uint8Array;
  node: TextPathNode;
  /** the object visit that last met this key: a second meeting in one visit is a duplicate */
  seenIn: number;
}

const encoder = new TextEncoder();

/**
 * The trie for the text path, or undefined where it cannot follow it: a wildcard, a path selecting the
 * whole record, or a key that JSON.parse would not keep in text order (an integer-like key, which objects
 * put first) or that is not well-formed text.
 */
export function textPathTrie(root: PathNode): TextPathNode | undefined {
  if (root.terminal) return undefined;
  return convert(root);
}

function convert(node: PathNode): TextPathNode | undefined {
  if (node.any) return undefined;
  const converted: TextPathNode = { terminal: node.terminal, children: [], byName: new Map() };
  if (node.terminal) return converted;
  for (const [name, next] of node.children) {
    if (/^(0|[1-9][0-9]*)$/.test(name) || !name.isWellFormed()) return undefined;
    const child = convert(next);
    if (!child) return undefined;
    const entry = { name, raw: encoder.encode(name), member: encoder.encode(`${JSON.stringify(name)}:`), node: child, seenIn: 0 };
    converted.children.push(entry);
    converted.byName.set(name, entry);
  }
  return converted;
}

/** A growing UTF-8 output; `length` may be set back to drop what was written since. */
class ByteOutput {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }

  private room(size: number): void {
    if (this.length + size <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + size));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  byte(byte: number): void {
    this.room(1);
    this.bytes[this.length++] = byte;
  }

  copy(from: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    const bytes = this.bytes;
    let at = this.length;
    // most copies are a few bytes, where a loop beats making a subarray to set from
    if (end - start > 64) bytes.set(from.subarray(start, end), at);
    else for (let k = start; k < end; k++) bytes[at++] = from[k];
    this.length += end - start;
  }

  text(text: string): void {
    this.room(text.length * 3);
    this.length += encoder.encodeInto(text, this.bytes.subarray(this.length)).written;
  }
}

/** Counts object visits, so that each visit knows the keys it has met (TextPathChild.seenIn). */
let visits = 0;
/** How many members the last pickObject kept. */
let keptMembers = 0;

/**
 * The picked records of the value that starts at `start` (the text valid UTF-8 and not too deep, as
 * Utility.runOnText is given it): their JSON text as UTF-8 and where the value ends, or undefined (see
 * the module's comment).
 */
export function pickTextAt(bytes: Uint8Array, start: number, trie: TextPathNode): { output: Uint8Array; end: number } | undefined {
  // the output is at most the input but for values written again longer (1E9); pages never written cost nothing
  const output = new ByteOutput(bytes.length - start + 16);
  let end: number;
  if (bytes[start] === OPEN_BRACE) end = pickObject(bytes, start, trie, output);
  else if (bytes[start] === OPEN_BRACKET) end = pickRecords(bytes, start, trie, output);
  else return undefined;
  return end < 0 ? undefined : { output: output.bytes.subarray(0, output.length), end };
}

/** An array of records from its `[`: each record picked, or DECLINED at the first that is not an object. */
function pickRecords(bytes: Uint8Array, at: number, trie: TextPathNode, output: ByteOutput): number {
  output.byte(OPEN_BRACKET);
  let i = skipWhitespace(bytes, at + 1);
  if (bytes[i] !== CLOSE_BRACKET)
    for (;;) {
      if (bytes[i] !== OPEN_BRACE) return DECLINED;
      i = pickObject(bytes, i, trie, output);
      if (i < 0) return i;
      i = skipWhitespace(bytes, i);
      if (bytes[i] === CLOSE_BRACKET) break;
      if (bytes[i] !== COMMA) return NOT_JSON;
      output.byte(COMMA);
      i = skipWhitespace(bytes, i + 1);
    }
  output.byte(CLOSE_BRACKET);
  return i + 1;
}

/** An object from its `{`: `{` and its picked members and `}` written, keptMembers set. */
function pickObject(bytes: Uint8Array, at: number, node: TextPathNode, output: ByteOutput): number {
  const visit = ++visits;
  let kept = 0;
  output.byte(OPEN_BRACE);
  let i = skipWhitespace(bytes, at + 1);
  if (bytes[i] !== CLOSE_BRACE)
    for (;;) {
      if (bytes[i] !== QUOTE) return NOT_JSON;
      const keyStart = i;
      i = skipJsonString(bytes, i);
      if (i < 0) return NOT_JSON;
      const child = scanned.stringEscaped
        ? node.byName.get(JSON.parse(decodeUtf8(bytes.subarray(keyStart, i))!))
        : childNamed(node, bytes, keyStart + 1, i - 1);
      i = skipWhitespace(bytes, i);
      if (bytes[i] !== COLON) return NOT_JSON;
      i = skipWhitespace(bytes, i + 1);
      if (child === undefined) i = skipJsonValue(bytes, i);
      else {
        if (child.seenIn === visit) return DECLINED;
        child.seenIn = visit;
        const memberStart = output.length;
        if (kept > 0) output.byte(COMMA);
        output.copy(child.member, 0, child.member.length);
        if (child.node.terminal) {
          i = copyValue(bytes, i, output);
          kept++;
        } else if (bytes[i] === OPEN_BRACE) {
          i = pickObject(bytes, i, child.node, output);
          if (keptMembers > 0) kept++;
          else output.length = memberStart; // nothing inside was picked: the member is left out
        } else if (bytes[i] === OPEN_BRACKET) return DECLINED;
        else {
          i = skipJsonScalar(bytes, i); // a path continuing into a scalar picks nothing
          output.length = memberStart;
        }
      }
      if (i < 0) return i;
      i = skipWhitespace(bytes, i);
      if (bytes[i] === CLOSE_BRACE) break;
      if (bytes[i] !== COMMA) return NOT_JSON;
      i = skipWhitespace(bytes, i + 1);
    }
  output.byte(CLOSE_BRACE);
  keptMembers = kept;
  return i + 1;
}

/** The child whose name is the key's bytes (a key without escapes), if any. */
function childNamed(node: TextPathNode, bytes: Uint8Array, start: number, end: number): TextPathChild | undefined {
  const length = end - start;
  for (const child of node.children) {
    const raw = child.raw;
    if (raw.length !== length) continue;
    let k = 0;
    while (k < length && raw[k] === bytes[start + k]) k++;
    if (k === length) return child;
  }
  return undefined;
}

/** Whether JSON.stringify writes the value just scanned, which starts with `first`, as its text is. */
function writtenAsRead(first: number): boolean {
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return false; // its whitespace, and its members' own forms
  if (first === QUOTE) return !scanned.stringEscaped;
  if (first === 0x74 || first === 0x66 || first === 0x6e) return true; // true, false, null
  return scanned.numberPlain;
}

/** A picked value: copied when JSON.stringify would write it as it is, else parsed and written again. */
function copyValue(bytes: Uint8Array, at: number, output: ByteOutput): number {
  const end = skipJsonValue(bytes, at);
  if (end < 0) return NOT_JSON;
  if (writtenAsRead(bytes[at])) output.copy(bytes, at, end);
  else output.text(JSON.stringify(JSON.parse(decodeUtf8(bytes.subarray(at, end))!)));
  return end;
}
