/**
 * A lazily expanded view of JSON text, for edits that lose nothing. A value is kept as a byte range of
 * the text it came from until an edit needs to look inside it; only the containers on an edited path are
 * expanded into members or elements, each of which keeps the exact bytes around it (whitespace, the key
 * as escaped, the colon). Writing the tree back copies the untouched ranges, merged wherever they are
 * still adjacent, so a one-field edit of a 10 MB document costs one scan and a few large copies, and
 * every number (`12345678901234567890`, `1.0`, `-0`, `1e400`), key order and duplicate key that the
 * edit did not touch comes back byte for byte. The texts are valid JSON (parsed before), so the scanner
 * trusts their structure.
 */

import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipString,
  skipValue,
  skipWhitespace,
} from "./scan";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes [start, end) of some text: the document, the patch, or a literal made here. */
export interface Piece {
  source: Uint8Array;
  start: number;
  end: number;
}
export interface RawNode {
  kind: "raw";
  piece: Piece;
}
export interface Member {
  lead: Piece;
  keyText: Piece;
  key?: string;
  colon: Piece;
  value: JsonNode;
  trail: Piece;
}
export interface ObjectNode {
  kind: "object";
  members: Member[];
  end: Piece;
}
export interface Element {
  lead: Piece;
  value: JsonNode;
  trail: Piece;
}
export interface ArrayNode {
  kind: "array";
  elements: Element[];
  end: Piece;
}
export type JsonNode = RawNode | ObjectNode | ArrayNode;
export type Container = ObjectNode | ArrayNode;

/** A whole text: the bytes before the value (whitespace, a byte order mark), the value, the bytes after. */
export interface JsonText {
  lead: Piece;
  root: JsonNode;
  trail: Piece;
}

const piece = (source: Uint8Array, start: number, end: number): Piece => ({ source, start, end });
export const literal = (text: string): Piece => {
  const bytes = encoder.encode(text);
  return piece(bytes, 0, bytes.length);
};
const EMPTY = literal("");
const COLON_PIECE = literal(":");
export const raw = (p: Piece): RawNode => ({ kind: "raw", piece: p });

/** Reads a whole text; a UTF-8 byte order mark stays in the lead. */
export function readText(bytes: Uint8Array): JsonText {
  let start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  start = skipWhitespace(bytes, start);
  const end = skipValue(bytes, start);
  return { lead: piece(bytes, 0, start), root: raw(piece(bytes, start, end)), trail: piece(bytes, end, bytes.length) };
}

/** The first byte of a value: `{`, `[`, `"`, a digit or `-`, `t`, `f`, `n`. */
export function firstByte(node: JsonNode): number {
  if (node.kind === "object") return OPEN_BRACE;
  if (node.kind === "array") return OPEN_BRACKET;
  return node.piece.source[node.piece.start];
}

export const isObject = (node: JsonNode) => firstByte(node) === OPEN_BRACE;
export const isArray = (node: JsonNode) => firstByte(node) === OPEN_BRACKET;

/** One level of a container, its children left raw. Scalars come back as they are. */
export function expand(node: JsonNode): JsonNode {
  if (node.kind !== "raw") return node;
  const { source, start, end } = node.piece;
  const open = source[start];
  if (open !== OPEN_BRACE && open !== OPEN_BRACKET) return node;
  const isObj = open === OPEN_BRACE;
  const close = end - 1;
  const members: Member[] = [];
  const elements: Element[] = [];
  let at = start + 1;
  let endPiece = piece(source, at, close);
  while (at < close) {
    const leadStart = at;
    at = skipWhitespace(source, at);
    if (at >= close) break;
    const lead = piece(source, leadStart, at);
    let keyText: Piece | undefined;
    let colon: Piece | undefined;
    if (isObj) {
      const keyEnd = skipString(source, at);
      keyText = piece(source, at, keyEnd);
      const colonAt = skipWhitespace(source, keyEnd);
      at = skipWhitespace(source, colonAt + 1);
      colon = piece(source, keyEnd, at);
    }
    const valueEnd = skipValue(source, at);
    const value = raw(piece(source, at, valueEnd));
    const next = skipWhitespace(source, valueEnd);
    const isLast = source[next] !== COMMA;
    const trail = isLast ? EMPTY : piece(source, valueEnd, next);
    if (isObj) members.push({ lead, keyText: keyText!, colon: colon!, value, trail });
    else elements.push({ lead, value, trail });
    if (isLast) {
      endPiece = piece(source, valueEnd, close);
      break;
    }
    at = next + 1;
  }
  return isObj ? { kind: "object", members, end: endPiece } : { kind: "array", elements, end: endPiece };
}

/** Short ASCII text without escapes, read without a decoder call (the common key), else undefined. */
function plainAscii(bytes: Uint8Array, start: number, end: number): string | undefined {
  if (end - start > 64) return undefined;
  let text = "";
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    if (byte >= 0x80 || byte === BACKSLASH) return undefined;
    text += String.fromCharCode(byte);
  }
  return text;
}

/** The member's name, decoded once when first needed. */
export function keyOf(member: Member): string {
  if (member.key === undefined) {
    const { source, start, end } = member.keyText;
    const inner = source.subarray(start + 1, end - 1);
    member.key =
      plainAscii(source, start + 1, end - 1) ??
      (inner.includes(BACKSLASH) ? (JSON.parse(decoder.decode(source.subarray(start, end))) as string) : decoder.decode(inner));
  }
  return member.key;
}

/** The index of the effective member named `key` (the last one, as JSON.parse reads duplicates), or -1. */
export function findMember(object: ObjectNode, key: string): number {
  const keyBytes = encoder.encode(key);
  for (let i = object.members.length - 1; i >= 0; i--) {
    const member = object.members[i];
    if (member.key !== undefined) {
      if (member.key === key) return i;
      continue;
    }
    // compared as bytes while no escape shows up; a name with escapes is decoded
    const { source, start, end } = member.keyText;
    let same = end - start - 2 === keyBytes.length;
    let escaped = false;
    for (let j = start + 1; j < end - 1; j++) {
      const byte = source[j];
      if (byte === BACKSLASH) {
        escaped = true;
        break;
      }
      if (same && byte !== keyBytes[j - start - 1]) same = false;
    }
    if (escaped ? keyOf(member) === key : same) return i;
  }
  return -1;
}

/**
 * A new member or element takes its whitespace from the sibling it is inserted before (or the last
 * one), so a pretty-printed document stays pretty.
 */
export function newMember(object: ObjectNode, at: number, keyText: Piece, value: JsonNode, key?: string): Member {
  const model = object.members[at] ?? object.members.at(-1);
  return { lead: model?.lead ?? EMPTY, keyText, key, colon: model?.colon ?? COLON_PIECE, value, trail: EMPTY };
}

export function newElement(array: ArrayNode, at: number, value: JsonNode): Element {
  const model = array.elements[at] ?? array.elements.at(-1);
  return { lead: model?.lead ?? EMPTY, value, trail: EMPTY };
}

export const keyPiece = (key: string) => literal(JSON.stringify(key));
export const emptyObject = (): ObjectNode => ({ kind: "object", members: [], end: EMPTY });

/**
 * A copy that later edits of either side cannot reach. An expanded container is written out once into
 * bytes of its own, so a copy costs its size once, however many copies of copies a patch makes (copying
 * the tree level by level made each copy of the root copy every earlier copy again).
 */
export function cloneNode(node: JsonNode): JsonNode {
  if (node.kind === "raw") return node;
  const bytes = writeNode(node);
  return raw(piece(bytes, 0, bytes.length));
}

const length = (p: Piece) => p.end - p.start;

/** The byte length `writeNode` would give, without writing: raw ranges by their length, containers by their parts. */
export function sizeOf(node: JsonNode): number {
  if (node.kind === "raw") return length(node.piece);
  let size = 2 + length(node.end);
  if (node.kind === "object") {
    for (const member of node.members) size += memberSize(member);
    return size + Math.max(0, node.members.length - 1);
  }
  for (const element of node.elements) size += elementSize(element);
  return size + Math.max(0, node.elements.length - 1);
}

/** What one member adds to its object's text, the comma before it aside. */
export const memberSize = (member: Member) =>
  length(member.lead) + length(member.keyText) + length(member.colon) + sizeOf(member.value) + length(member.trail);
export const elementSize = (element: Element) => length(element.lead) + sizeOf(element.value) + length(element.trail);

/** Collects pieces, merging neighbours of one source into one copy. */
class Writer {
  private readonly pieces: Piece[] = [];
  private length = 0;

  add(next: Piece): void {
    if (next.end === next.start) return;
    this.length += next.end - next.start;
    const last = this.pieces.at(-1);
    if (last && last.source === next.source && last.end === next.start) last.end = next.end;
    else this.pieces.push({ ...next });
  }

  /** A punctuation byte: when the current range continues with that very byte, it simply grows. */
  punct(byte: number): void {
    const last = this.pieces.at(-1);
    this.length++;
    if (last && last.source[last.end] === byte && last.end < last.source.length) last.end++;
    else this.pieces.push({ source: PUNCT[byte], start: 0, end: 1 });
  }

  node(node: JsonNode): void {
    if (node.kind === "raw") return this.add(node.piece);
    const object = node.kind === "object";
    this.punct(object ? OPEN_BRACE : OPEN_BRACKET);
    const children: (Member | Element)[] = object ? node.members : node.elements;
    children.forEach((child, index) => {
      if (index > 0) this.punct(COMMA);
      this.add(child.lead);
      if (object) {
        this.add((child as Member).keyText);
        this.add((child as Member).colon);
      }
      this.node(child.value);
      this.add(child.trail);
    });
    this.add(node.end);
    this.punct(object ? CLOSE_BRACE : CLOSE_BRACKET);
  }

  bytes(): Uint8Array {
    if (this.pieces.length === 1) {
      const only = this.pieces[0];
      return only.source.subarray(only.start, only.end);
    }
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const { source, start, end } of this.pieces) {
      out.set(source.subarray(start, end), offset);
      offset += end - start;
    }
    return out;
  }
}

const PUNCT: Record<number, Uint8Array> = Object.fromEntries(
  [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA].map((byte) => [byte, Uint8Array.of(byte)]),
);

export function writeText(text: JsonText): Uint8Array {
  const writer = new Writer();
  writer.add(text.lead);
  writer.node(text.root);
  writer.add(text.trail);
  return writer.bytes();
}

export function writeNode(node: JsonNode): Uint8Array {
  const writer = new Writer();
  writer.node(node);
  return writer.bytes();
}

/** Nesting depth of a value (a scalar is 0): raw ranges in one pass over their bytes, expanded levels by their children. */
export function depthOf(node: JsonNode): number {
  if (node.kind === "object") return 1 + node.members.reduce((deepest, member) => Math.max(deepest, depthOf(member.value)), 0);
  if (node.kind === "array") return 1 + node.elements.reduce((deepest, element) => Math.max(deepest, depthOf(element.value)), 0);
  const { source: bytes, start, end } = node.piece;
  let depth = 0;
  let deepest = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) i = skipString(bytes, i) - 1;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) deepest = Math.max(deepest, ++depth);
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

/** A decimal number as sign, significant digits and exponent, so that 1, 1.0 and 10e-1 compare equal. */
function canonicalNumber(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const fraction = match[3] ?? "";
  let digits = (match[2] + fraction).replace(/^0+/, "");
  if (digits === "") return "0";
  let exponent = BigInt(match[4] ?? "0") - BigInt(fraction.length);
  const trimmed = digits.replace(/0+$/, "");
  exponent += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${match[1]}${digits}e${exponent}`;
}

function scalarText(node: RawNode): string {
  return decoder.decode(node.piece.source.subarray(node.piece.start, node.piece.end));
}

/**
 * JSON equality as RFC 6902 §4.6 defines it: same type; numbers by value (compared exactly, so big
 * integers and long decimals are told apart); strings after unescaping; objects by their members
 * (the last of duplicates), arrays element by element.
 */
export function jsonEqual(a: JsonNode, b: JsonNode): boolean {
  const kindA = firstByte(a),
    kindB = firstByte(b);
  const numeric = (byte: number) => byte === 0x2d || (byte >= 0x30 && byte <= 0x39);
  if (numeric(kindA) || numeric(kindB)) {
    return numeric(kindA) && numeric(kindB) && canonicalNumber(scalarText(a as RawNode)) === canonicalNumber(scalarText(b as RawNode));
  }
  if (kindA !== kindB) return false;
  if (kindA === QUOTE) return JSON.parse(scalarText(a as RawNode)) === JSON.parse(scalarText(b as RawNode));
  if (kindA === OPEN_BRACKET) {
    const left = (expand(a) as ArrayNode).elements,
      right = (expand(b) as ArrayNode).elements;
    return left.length === right.length && left.every((element, i) => jsonEqual(element.value, right[i].value));
  }
  if (kindA === OPEN_BRACE) {
    const left = effectiveMembers(expand(a) as ObjectNode),
      right = effectiveMembers(expand(b) as ObjectNode);
    if (left.size !== right.size) return false;
    for (const [key, value] of left) {
      const other = right.get(key);
      if (!other || !jsonEqual(value, other)) return false;
    }
    return true;
  }
  return scalarText(a as RawNode) === scalarText(b as RawNode);
}

/** Name → value as JSON.parse would see it: the last of duplicate names wins. */
export function effectiveMembers(object: ObjectNode): Map<string, JsonNode> {
  const map = new Map<string, JsonNode>();
  for (const member of object.members) map.set(keyOf(member), member.value);
  return map;
}

export const isNull = (node: JsonNode) => node.kind === "raw" && firstByte(node) === 0x6e;
