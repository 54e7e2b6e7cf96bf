/**
 * A document's entries in a query index, computed from its stored bytes as written: each field's value
 * is found by its JSON Pointer in the lossless tree (only the containers on the path are expanded), and
 * encoded (index-key.ts). A field whose value is an array gives one value per element (a multikey
 * index); an index of several fields gets one entry per combination, bounded by the account's
 * `maxIndexedArrayElements`. A missing value, and an empty array, get an entry too, so every document
 * of the folder is in every index exactly once or more.
 */

import { decimalOf, encodeValue, invert, concat as join, type KeyValue } from "./index-key";
import { expand, findMember, isArray, isObject, type JsonNode, type ObjectNode, readText, writeNode } from "./tree";

export interface IndexedField {
  tokens: string[];
  descending: boolean;
}

export interface EntryLimits {
  /** entries of one index for one document (the product of its fields' array lengths); null: none */
  maxEntries: number | null;
  /** bytes of one encoded value; null: none */
  maxValueBytes: number | null;
}

export class EntryRefused extends Error {
  constructor(
    message: string,
    readonly field: number,
  ) {
    super(message);
  }
}

const decoder = new TextDecoder();

/** The node a pointer names, or undefined; array elements are reached by their index, as RFC 6901 says. */
export function nodeAt(root: JsonNode, tokens: string[]): JsonNode | undefined {
  let node = root;
  for (const token of tokens) {
    const container = expand(node);
    if (isObject(container)) {
      const at = findMember(container as ObjectNode, token);
      if (at < 0) return undefined;
      node = (container as ObjectNode).members[at].value;
    } else if (isArray(container) && container.kind === "array") {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      const element = container.elements[Number(token)];
      if (!element) return undefined;
      node = element.value;
    } else return undefined;
  }
  return node;
}

/** The exact bytes of the value at a pointer (whitespace inside kept), or undefined. */
export function spanAt(bytes: Uint8Array, tokens: string[]): Uint8Array | undefined {
  const node = nodeAt(readText(bytes).root, tokens);
  return node && writeNode(node);
}

/** A scalar (or object) node as a key value. */
export function keyValueOf(node: JsonNode): KeyValue {
  const text = decoder.decode(writeNode(node));
  const first = text.charCodeAt(0);
  if (first === 0x22) return { type: "string", value: JSON.parse(text) as string };
  if (first === 0x74 || first === 0x66) return { type: "boolean", value: first === 0x74 };
  if (first === 0x6e) return { type: "null" };
  if (first === 0x7b) return { type: "object", text: canonicalObjectText(text) };
  return { type: "number", literal: text };
}

/** An object's text without insignificant whitespace, numbers and key order as written. */
function canonicalObjectText(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (char !== " " && char !== "\n" && char !== "\r" && char !== "\t") out += char;
  }
  return out;
}

/** The values a field contributes: the elements of an array, else the value; missing is a value too. */
export function fieldValues(root: JsonNode, tokens: string[]): KeyValue[] {
  const node = nodeAt(root, tokens);
  if (!node) return [{ type: "missing" }];
  const expanded = isArray(node) ? expand(node) : node;
  if (expanded.kind === "array") {
    if (expanded.elements.length === 0) return [{ type: "emptyArray" }];
    return expanded.elements.map((element) =>
      isArray(element.value)
        ? { type: "object", text: canonicalObjectText(decoder.decode(writeNode(element.value))) }
        : keyValueOf(element.value),
    );
  }
  return [keyValueOf(node)];
}

/** A number is indexable when its exponent fits the encoding. */
const encodable = (value: KeyValue) => value.type !== "number" || decimalOf(value.literal) !== undefined;

/**
 * The keys of one document in one index, distinct, or EntryRefused naming the field past a limit.
 * `root` is the document's tree (readText(bytes).root), shared by the indexes of one write.
 */
export function indexKeys(root: JsonNode, fields: IndexedField[], limits: EntryLimits): Uint8Array[] {
  let combinations: Uint8Array[][] = [[]];
  fields.forEach((field, at) => {
    const encoded: Uint8Array[] = [];
    for (const value of fieldValues(root, field.tokens)) {
      const bytes = encodable(value) ? encodeValue(value) : undefined;
      if (!bytes) throw new EntryRefused(`a number at field ${at} is outside what an index holds (exponent past 2^31)`, at);
      if (limits.maxValueBytes !== null && bytes.length > limits.maxValueBytes)
        throw new EntryRefused(
          `a value at field ${at} takes ${bytes.length} bytes in the index, more than the ${limits.maxValueBytes} allowed`,
          at,
        );
      encoded.push(field.descending ? invert(bytes) : bytes);
    }
    const count = combinations.length * encoded.length;
    if (limits.maxEntries !== null && count > limits.maxEntries)
      throw new EntryRefused(`the document would have ${count} entries in the index, more than the ${limits.maxEntries} allowed`, at);
    combinations = combinations.flatMap((prefix) => encoded.map((bytes) => [...prefix, bytes]));
  });
  const distinct = new Map<string, Uint8Array>();
  for (const parts of combinations) {
    const key = join(parts);
    distinct.set(Buffer.from(key).toString("hex"), key);
  }
  return [...distinct.values()];
}

export const documentRoot = (bytes: Uint8Array) => readText(bytes).root;

/** One declared index as its entries are computed: its id and its fields. */
export interface EntryIndex {
  id: string;
  fields: IndexedField[];
}

/** A document's entries in several indexes (pairwise index ids and hex keys), or the first index and field refused. */
export type DocumentEntries =
  | { entryIndexes: string[]; entryKeys: string[] }
  | { refused: { index: string; field: number; message: string } };

/**
 * The entries of `bytes` in each of `indexes`: what a write computes on the main thread and an index
 * build in a worker (engine/worker.ts), so the two agree.
 */
export function documentEntries(bytes: Uint8Array, indexes: EntryIndex[], limits: EntryLimits): DocumentEntries {
  const entryIndexes: string[] = [];
  const entryKeys: string[] = [];
  if (indexes.length === 0) return { entryIndexes, entryKeys };
  const root = documentRoot(bytes);
  for (const index of indexes) {
    try {
      for (const key of indexKeys(root, index.fields, limits)) {
        entryIndexes.push(index.id);
        entryKeys.push(Buffer.from(key).toString("hex"));
      }
    } catch (error) {
      if (!(error instanceof EntryRefused)) throw error;
      return { refused: { index: index.id, field: error.field, message: error.message } };
    }
  }
  return { entryIndexes, entryKeys };
}
