/**
 * Partial updates of stored content: JSON Patch (RFC 6902, with JSON Pointer, RFC 6901) and JSON Merge
 * Patch (RFC 7396), applied to the lossless tree of json-tree.ts. The parts of the document a patch does
 * not touch keep their exact bytes, and every value a patch writes is stored as written in the patch.
 * Nothing here knows about HTTP or storage: a patch is read from bytes and applied to bytes.
 */
import { MAX_JSON_DEPTH, parseJsonBytes } from "../../http/json";
import {
  cloneNode, depthOf, effectiveMembers, emptyObject, expand, findMember, isNull, isObject, jsonEqual, keyOf, keyPiece,
  newElement, newMember, readText, writeText, type ArrayNode, type Container, type JsonNode, type JsonText, type ObjectNode,
} from "./json-tree";

export const JSON_PATCH = "application/json-patch+json";
export const MERGE_PATCH = "application/merge-patch+json";
export type PatchFormat = typeof JSON_PATCH | typeof MERGE_PATCH;

/** Why a patch cannot apply: `invalid` (400) or a failed `test` (409). `index` is the operation's. */
export class PatchError extends Error {
  constructor(readonly kind: "empty" | "malformed" | "invalid" | "test_failed", message: string, readonly index?: number, readonly path?: string) {
    super(message);
  }
}

type OpName = "add" | "remove" | "replace" | "move" | "copy" | "test";
const OPS: readonly OpName[] = ["add", "remove", "replace", "move", "copy", "test"];

interface Operation {
  index: number;
  op: OpName;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: JsonNode;
}

export type Patch = { format: typeof JSON_PATCH; operations: Operation[] } | { format: typeof MERGE_PATCH; value: JsonNode };

/** RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 for "/" and ~0 for "~". */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  return pointer.slice(1).split("/").map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

const invalid = (operation: { index: number; path?: string }, message: string) =>
  new PatchError("invalid", `Operation ${operation.index}${operation.path !== undefined ? ` (path ${JSON.stringify(operation.path)})` : ""}: ${message}`, operation.index, operation.path);

/** Reads a patch body; a body that is not JSON, or not a JSON Patch document, is refused whole. */
export function readPatch(format: PatchFormat, bytes: Uint8Array): Patch {
  if (bytes.byteLength === 0) throw new PatchError("empty", "The request body must be the patch; it is empty");
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw new PatchError("malformed", parsed.message);
  const text = readText(bytes);
  if (format === MERGE_PATCH) return { format, value: text.root };
  if (!Array.isArray(parsed.value)) throw new PatchError("invalid", "A JSON Patch document is an array of operations");
  const elements = (expand(text.root) as ArrayNode).elements;
  const operations = (parsed.value as unknown[]).map((entry, index) => readOperation(entry, elements[index].value, index));
  return { format, operations };
}

function readOperation(entry: unknown, node: JsonNode, index: number): Operation {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw invalid({ index }, "an operation must be an object");
  const members = (expand(node) as ObjectNode).members;
  const seen = new Set<string>();
  for (const member of members) {
    const name = keyOf(member);
    if (seen.has(name)) throw invalid({ index }, `member "${name}" appears twice`);
    seen.add(name);
  }
  const fields = entry as Record<string, unknown>;
  const path = typeof fields.path === "string" ? fields.path : undefined;
  const at = { index, path };
  if (!OPS.includes(fields.op as OpName)) throw invalid(at, `"op" must be one of ${OPS.join(", ")}${typeof fields.op === "string" ? ` (got "${fields.op}")` : ""}`);
  const op = fields.op as OpName;
  if (path === undefined) throw invalid(at, `"path" is required and must be a JSON Pointer string`);
  const tokens = parsePointer(path);
  if (!tokens) throw invalid(at, `"path" is not a valid JSON Pointer (it must be "" or start with "/"; "~" only as ~0 or ~1)`);
  const operation: Operation = { index, op, path, tokens };
  if (op === "move" || op === "copy") {
    if (typeof fields.from !== "string") throw invalid(at, `"${op}" needs "from", a JSON Pointer string`);
    const fromTokens = parsePointer(fields.from);
    if (!fromTokens) throw invalid(at, `"from" is not a valid JSON Pointer`);
    Object.assign(operation, { from: fields.from, fromTokens });
  }
  if (op === "add" || op === "replace" || op === "test") {
    if (!Object.hasOwn(fields, "value")) throw invalid(at, `"${op}" needs "value"`);
    operation.value = members.find((member) => keyOf(member) === "value")!.value;
  }
  return operation;
}

/** The patched content, or a PatchError. The document bytes are valid JSON (they were stored as such). */
export function applyPatch(patch: Patch, document: Uint8Array): Uint8Array {
  const text = readText(document);
  if (patch.format === MERGE_PATCH) {
    // every value of the result sits where it sat in the document or in the patch: no deeper than either
    text.root = mergePatch(text.root, patch.value);
  } else {
    for (const operation of patch.operations) applyOperation(text, operation);
  }
  return writeText(text);
}

/**
 * RFC 7396 §2: objects merge member by member (null removes), anything else replaces. The target's
 * members are indexed once, so a patch of many members costs one pass over a large object, not one each.
 */
function mergePatch(target: JsonNode | undefined, patch: JsonNode): JsonNode {
  if (!isObject(patch)) return patch;
  const fresh = !(target && isObject(target));
  const result = fresh ? emptyObject() : (expand(target!) as ObjectNode);
  const patchObject = expand(patch) as ObjectNode;
  const lastOf = new Map(patchObject.members.map((member) => [keyOf(member), member]));
  // a few names are looked up one by one; many at once through an index of the target's names
  const indexOf = lastOf.size > 8 ? new Map(result.members.map((member, index) => [keyOf(member), index])) : undefined;
  const removed = new Set<string>();
  for (const [key, value] of effectiveMembers(patchObject)) {
    const found = indexOf ? indexOf.get(key) : findMember(result, key);
    const at = found === undefined || found < 0 ? undefined : found;
    if (isNull(value)) {
      removed.add(key);
    } else if (at !== undefined) {
      result.members[at].value = mergePatch(result.members[at].value, value);
    } else {
      const written = lastOf.get(key)!;
      // a new member is written as the patch wrote it: its name's escapes and, in a new object, its spacing
      const member = fresh ? { ...written } : newMember(result, result.members.length, written.keyText, value, key);
      member.value = mergePatch(undefined, value);
      const index = result.members.push(member) - 1;
      indexOf?.set(key, index);
    }
  }
  if (removed.size > 0) result.members = result.members.filter((member) => !removed.has(keyOf(member)));
  if (fresh) result.end = patchObject.end;
  return result;
}

interface Location {
  container: Container;
  /** the member or element index; for an absent member -1, for "-" the array length */
  index: number;
  token: string;
}

/** Follows every token but the last: each must exist and hold a container for the next. */
function locate(text: JsonText, tokens: string[], operation: Operation, pointer: string): Location {
  let node = (text.root = expand(text.root));
  for (let depth = 0; depth < tokens.length - 1; depth++) {
    const found = childIndex(node, tokens[depth], false, operation, pointer);
    if (found < 0) throw invalid(operation, `${pointer} does not exist (no ${describe(tokens.slice(0, depth + 1))})`);
    const child = node.kind === "object" ? node.members[found] : (node as ArrayNode).elements[found];
    node = child.value = expand(child.value);
  }
  if (node.kind === "raw") throw invalid(operation, `${pointer} does not exist (${describe(tokens.slice(0, -1))} is not an object or array)`);
  const token = tokens[tokens.length - 1];
  return { container: node, index: childIndex(node, token, true, operation, pointer), token };
}

const describe = (tokens: string[]) => (tokens.length === 0 ? "the document" : "/" + tokens.map((token) => token.replaceAll("~", "~0").replaceAll("/", "~1")).join("/"));

const ARRAY_INDEX = /^(0|[1-9][0-9]{0,15})$/;

/**
 * The index a token names in a container, -1 when absent. In arrays only decimal indexes without
 * leading zeros (or "-", the end, for the last token) name elements; anything else is an error.
 */
function childIndex(node: JsonNode, token: string, last: boolean, operation: Operation, pointer: string): number {
  if (node.kind === "object") return findMember(node, token);
  if (node.kind !== "array") throw invalid(operation, `${pointer} does not exist (a scalar has no member "${token}")`);
  if (token === "-" && last) return node.elements.length;
  if (!ARRAY_INDEX.test(token)) throw invalid(operation, `${pointer}: "${token}" is not an array index (0, 1, 2, … without leading zeros${last ? ', or "-"' : ""})`);
  const index = Number(token);
  if (index > node.elements.length || (!last && index === node.elements.length)) throw invalid(operation, `${pointer}: index ${index} is out of bounds (the array has ${node.elements.length} elements)`);
  return index;
}

/** The value at an existing location. */
function valueAt(text: JsonText, tokens: string[], operation: Operation, pointer: string): JsonNode {
  if (tokens.length === 0) return text.root;
  const location = locate(text, tokens, operation, pointer);
  const { container, index } = location;
  if (container.kind === "object") {
    if (index < 0) throw invalid(operation, `${pointer} does not exist`);
    return container.members[index].value;
  }
  if (index >= container.elements.length) throw invalid(operation, `${pointer} does not exist (the array has ${container.elements.length} elements)`);
  return container.elements[index].value;
}

function add(text: JsonText, tokens: string[], value: JsonNode, operation: Operation): void {
  checkDepth(operation, tokens.length, value);
  if (tokens.length === 0) {
    text.root = value;
    return;
  }
  const { container, index, token } = locate(text, tokens, operation, operation.path);
  if (container.kind === "object") {
    if (index >= 0) container.members[index].value = value;
    else container.members.push(newMember(container, container.members.length, keyPiece(token), value, token));
  } else {
    container.elements.splice(index, 0, newElement(container, index, value));
  }
}

/** Removes the value at an existing location (every member of that name, so none shows through) and returns it. */
function remove(text: JsonText, tokens: string[], operation: Operation, pointer: string): JsonNode {
  if (tokens.length === 0) throw invalid(operation, "the whole document cannot be removed");
  const value = valueAt(text, tokens, operation, pointer);
  const { container, index, token } = locate(text, tokens, operation, pointer);
  if (container.kind === "object") container.members = container.members.filter((member) => keyOf(member) !== token);
  else container.elements.splice(index, 1);
  return value;
}

function applyOperation(text: JsonText, operation: Operation): void {
  const { tokens, path } = operation;
  switch (operation.op) {
    case "add":
      return add(text, tokens, operation.value!, operation);
    case "remove":
      remove(text, tokens, operation, path);
      return;
    case "replace": {
      valueAt(text, tokens, operation, path);
      checkDepth(operation, tokens.length, operation.value!);
      if (tokens.length === 0) {
        text.root = operation.value!;
        return;
      }
      const { container, index } = locate(text, tokens, operation, path);
      if (container.kind === "object") container.members[index].value = operation.value!;
      else container.elements[index].value = operation.value!;
      return;
    }
    case "move": {
      const from = operation.fromTokens!;
      if (operation.from === path) {
        valueAt(text, from, operation, operation.from);
        return;
      }
      if (path.startsWith(operation.from + "/")) throw invalid(operation, `a value cannot be moved into itself (from ${JSON.stringify(operation.from)})`);
      const value = remove(text, from, operation, operation.from!);
      return add(text, tokens, value, operation);
    }
    case "copy":
      return add(text, tokens, cloneNode(valueAt(text, operation.fromTokens!, operation, operation.from!)), operation);
    case "test":
      if (!jsonEqual(valueAt(text, tokens, operation, path), operation.value!)) {
        throw new PatchError("test_failed", `Operation ${operation.index} (test at ${JSON.stringify(path)}): the value differs`, operation.index, path);
      }
  }
}

/** Refuses a result that would nest deeper than any JSON body Kiln accepts. */
function checkDepth(operation: { index: number; path?: string }, at: number, value: JsonNode): void {
  if (at + depthOf(value) > MAX_JSON_DEPTH) throw invalid(operation, `the result would nest deeper than ${MAX_JSON_DEPTH} levels`);
}
