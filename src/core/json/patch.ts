/**
 * Partial updates of stored content: JSON Patch (RFC 6902, with JSON Pointer, RFC 6901) and JSON Merge
 * Patch (RFC 7396), applied to the lossless tree of json-tree.ts. The parts of the document a patch does
 * not touch keep their exact bytes, and every value a patch writes is stored as written in the patch.
 * Nothing here knows about HTTP or storage: a patch is read from bytes and applied to bytes.
 */
import { MAX_JSON_DEPTH, parseJsonBytes } from "./parse";
import { PatchBudget, PatchError, type PatchLimits } from "./patch-limits";
import {
  type ArrayNode,
  type Container,
  cloneNode,
  depthOf,
  effectiveMembers,
  elementSize,
  emptyObject,
  expand,
  findMember,
  isNull,
  isObject,
  type JsonNode,
  type JsonText,
  jsonEqual,
  keyOf,
  keyPiece,
  memberSize,
  newElement,
  newMember,
  type ObjectNode,
  readText,
  sizeOf,
  writeText,
} from "./tree";

export {
  INLINE_PATCH_MAX_BYTES,
  INLINE_WORK,
  PatchBudget,
  PatchError,
  type PatchLimits,
  PatchNeedsWorker,
  patchProblemOf,
  patchResultLimit,
  WORK_FACTOR,
} from "./patch-limits";

export const JSON_PATCH = "application/json-patch+json";
export const MERGE_PATCH = "application/merge-patch+json";
export type PatchFormat = typeof JSON_PATCH | typeof MERGE_PATCH;

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

export type Patch = ({ format: typeof JSON_PATCH; operations: Operation[] } | { format: typeof MERGE_PATCH; value: JsonNode }) & {
  bytes: number;
};

/** A patch to apply where it can take its time (a worker): `document` absent, the patch is only read, for its 400s. */
export interface PatchJob {
  format: PatchFormat;
  patch: Uint8Array;
  document?: Uint8Array;
  maxResultBytes: number;
}

/** The patched bytes (an empty array when only reading), or a PatchError. */
export function runPatchJob(job: PatchJob): Uint8Array {
  const patch = readPatch(job.format, job.patch);
  return job.document ? applyPatch(patch, job.document, { maxResultBytes: job.maxResultBytes }) : new Uint8Array(0);
}

/** RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 for "/" and ~0 for "~". */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

const invalid = (operation: { index: number; path?: string }, message: string) =>
  new PatchError(
    "invalid",
    `Operation ${operation.index}${operation.path !== undefined ? ` (path ${JSON.stringify(operation.path)})` : ""}: ${message}`,
    operation.index,
    operation.path,
  );

/** Reads a patch body; a body that is not JSON, or not a JSON Patch document, is refused whole. */
export function readPatch(format: PatchFormat, bytes: Uint8Array): Patch {
  if (bytes.byteLength === 0) throw new PatchError("empty", "The request body must be the patch; it is empty");
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw new PatchError("malformed", parsed.message);
  const text = readText(bytes);
  if (format === MERGE_PATCH) return { format, value: text.root, bytes: bytes.byteLength };
  if (!Array.isArray(parsed.value)) throw new PatchError("invalid", "A JSON Patch document is an array of operations");
  const elements = (expand(text.root) as ArrayNode).elements;
  const operations = (parsed.value as unknown[]).map((entry, index) => readOperation(entry, elements[index].value, index));
  return { format, operations, bytes: bytes.byteLength };
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
  if (!OPS.includes(fields.op as OpName))
    throw invalid(at, `"op" must be one of ${OPS.join(", ")}${typeof fields.op === "string" ? ` (got "${fields.op}")` : ""}`);
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
export function applyPatch(patch: Patch, document: Uint8Array, limits: PatchLimits): Uint8Array {
  return applyWithin(patch, document, new PatchBudget(limits.maxResultBytes, patch.bytes, document.byteLength, limits.inlineWork));
}

/** applyPatch with the budget given, so that its accounting can be read afterwards. */
export function applyWithin(patch: Patch, document: Uint8Array, budget: PatchBudget): Uint8Array {
  // reading the document scans it whole; a merge patch expands each container of both at most once
  budget.spend(document.byteLength + (patch.format === MERGE_PATCH ? patch.bytes : 0), { index: 0 });
  const text = readText(document);
  if (patch.format === MERGE_PATCH) {
    // every value of the result sits where it sat in the document or in the patch: no deeper than either,
    // and the work is one pass over both; only new members' copied whitespace can add bytes, so the size is counted once
    const before = sizeOf(text.root);
    text.root = mergePatch(text.root, patch.value);
    budget.grow(sizeOf(text.root) - before);
  } else {
    for (const operation of patch.operations) applyOperation(text, operation, budget);
  }
  budget.spend(budget.size, { index: patch.format === JSON_PATCH ? patch.operations.length - 1 : 0 });
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

/** A raw value about to be looked into is scanned once: that scan is the patch's work. */
function expandFor(node: JsonNode, budget: PatchBudget, operation: Operation): JsonNode {
  if (node.kind === "raw") budget.spend(node.piece.end - node.piece.start, operation);
  return expand(node);
}

/** Follows every token but the last: each must exist and hold a container for the next. */
function locate(text: JsonText, tokens: string[], operation: Operation, pointer: string, budget: PatchBudget): Location {
  let node = (text.root = expandFor(text.root, budget, operation));
  for (let depth = 0; depth < tokens.length - 1; depth++) {
    const found = childIndex(node, tokens[depth], false, operation, pointer, budget);
    if (found < 0) throw invalid(operation, `${pointer} does not exist (no ${describe(tokens.slice(0, depth + 1))})`);
    const child = node.kind === "object" ? node.members[found] : (node as ArrayNode).elements[found];
    node = child.value = expandFor(child.value, budget, operation);
  }
  if (node.kind === "raw")
    throw invalid(operation, `${pointer} does not exist (${describe(tokens.slice(0, -1))} is not an object or array)`);
  const token = tokens[tokens.length - 1];
  return { container: node, index: childIndex(node, token, true, operation, pointer, budget), token };
}

const describe = (tokens: string[]) =>
  tokens.length === 0 ? "the document" : "/" + tokens.map((token) => token.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

const ARRAY_INDEX = /^(0|[1-9][0-9]{0,15})$/;

/**
 * The index a token names in a container, -1 when absent. In arrays only decimal indexes without
 * leading zeros (or "-", the end, for the last token) name elements; anything else is an error.
 */
function childIndex(node: JsonNode, token: string, last: boolean, operation: Operation, pointer: string, budget: PatchBudget): number {
  if (node.kind === "object") {
    budget.spend(node.members.length, operation);
    return findMember(node, token);
  }
  if (node.kind !== "array") throw invalid(operation, `${pointer} does not exist (a scalar has no member "${token}")`);
  if (token === "-" && last) return node.elements.length;
  if (!ARRAY_INDEX.test(token))
    throw invalid(operation, `${pointer}: "${token}" is not an array index (0, 1, 2, … without leading zeros${last ? ', or "-"' : ""})`);
  const index = Number(token);
  if (index > node.elements.length || (!last && index === node.elements.length))
    throw invalid(operation, `${pointer}: index ${index} is out of bounds (the array has ${node.elements.length} elements)`);
  return index;
}

/** The value at an existing location. */
function valueAt(text: JsonText, tokens: string[], operation: Operation, pointer: string, budget: PatchBudget): JsonNode {
  if (tokens.length === 0) return text.root;
  const { container, index } = locate(text, tokens, operation, pointer, budget);
  if (container.kind === "object") {
    if (index < 0) throw invalid(operation, `${pointer} does not exist`);
    return container.members[index].value;
  }
  if (index >= container.elements.length)
    throw invalid(operation, `${pointer} does not exist (the array has ${container.elements.length} elements)`);
  return container.elements[index].value;
}

/** A comma stands between every two children: one more child adds one when there was one already. */
const commaFor = (children: number) => (children > 0 ? 1 : 0);

/** Stands for a value in a new member or element until the value is made, once the result is known to fit. */
const PENDING: JsonNode = { kind: "raw", piece: { source: new Uint8Array(0), start: 0, end: 0 } };

/**
 * Puts a value of `size` bytes at the location: `add` inserts into an array and sets an object's
 * member (RFC 6902 §4.1), `replace` requires the location to exist (§4.3). `value()` is called only
 * once the result is known to fit, so a copy is made only when it may be kept.
 */
function put(text: JsonText, tokens: string[], size: number, value: () => JsonNode, operation: Operation, budget: PatchBudget): void {
  if (tokens.length === 0) {
    budget.grow(size - sizeOf(text.root), operation);
    text.root = checkDepth(operation, 0, value(), budget);
    return;
  }
  const { container, index, token } = locate(text, tokens, operation, operation.path, budget);
  if (container.kind === "object" && index >= 0) {
    const member = container.members[index];
    budget.grow(size - sizeOf(member.value), operation);
    member.value = checkDepth(operation, tokens.length, value(), budget);
  } else if (container.kind === "object") {
    const member = newMember(container, container.members.length, keyPiece(token), PENDING, token);
    budget.grow(memberSize(member) + size + commaFor(container.members.length), operation);
    member.value = checkDepth(operation, tokens.length, value(), budget);
    container.members.push(member);
  } else if (operation.op === "replace") {
    const element = container.elements[index];
    budget.grow(size - sizeOf(element.value), operation);
    element.value = checkDepth(operation, tokens.length, value(), budget);
  } else {
    const element = newElement(container, index, PENDING);
    budget.grow(elementSize(element) + size + commaFor(container.elements.length), operation);
    element.value = checkDepth(operation, tokens.length, value(), budget);
    container.elements.splice(index, 0, element);
    budget.spend(container.elements.length, operation);
  }
}

/** Removes the value at an existing location (every member of that name, so none shows through) and returns it. */
function remove(text: JsonText, tokens: string[], operation: Operation, pointer: string, budget: PatchBudget): JsonNode {
  if (tokens.length === 0) throw invalid(operation, "the whole document cannot be removed");
  const value = valueAt(text, tokens, operation, pointer, budget);
  const { container, index, token } = locate(text, tokens, operation, pointer, budget);
  if (container.kind === "object") {
    const kept = container.members.filter((member) => keyOf(member) !== token);
    let removed = Math.max(0, container.members.length - 1) - Math.max(0, kept.length - 1);
    for (const member of container.members) if (keyOf(member) === token) removed += memberSize(member);
    budget.grow(-removed, operation);
    container.members = kept;
  } else {
    budget.grow(-(elementSize(container.elements[index]) + (container.elements.length > 1 ? 1 : 0)), operation);
    container.elements.splice(index, 1);
    budget.spend(container.elements.length, operation);
  }
  return value;
}

function applyOperation(text: JsonText, operation: Operation, budget: PatchBudget): void {
  const { tokens, path } = operation;
  switch (operation.op) {
    case "add": {
      const value = operation.value!;
      return put(text, tokens, sizeOf(value), () => value, operation, budget);
    }
    case "remove":
      remove(text, tokens, operation, path, budget);
      return;
    case "replace": {
      valueAt(text, tokens, operation, path, budget);
      const value = operation.value!;
      return put(text, tokens, sizeOf(value), () => value, operation, budget);
    }
    case "move": {
      const from = operation.fromTokens!;
      if (operation.from === path) {
        valueAt(text, from, operation, operation.from, budget);
        return;
      }
      if (path.startsWith(operation.from + "/"))
        throw invalid(operation, `a value cannot be moved into itself (from ${JSON.stringify(operation.from)})`);
      const value = remove(text, from, operation, operation.from!, budget);
      budget.spend(sizeOf(value), operation);
      return put(text, tokens, sizeOf(value), () => value, operation, budget);
    }
    case "copy": {
      const source = valueAt(text, operation.fromTokens!, operation, operation.from!, budget);
      const size = sizeOf(source);
      return put(
        text,
        tokens,
        size,
        () => {
          budget.spend(size, operation);
          return cloneNode(source);
        },
        operation,
        budget,
      );
    }
    case "test": {
      const actual = valueAt(text, tokens, operation, path, budget);
      budget.spend(sizeOf(actual) + sizeOf(operation.value!), operation);
      if (!jsonEqual(actual, operation.value!)) {
        throw new PatchError(
          "test_failed",
          `Operation ${operation.index} (test at ${JSON.stringify(path)}): the value differs`,
          operation.index,
          path,
        );
      }
    }
  }
}

/** Refuses a result that would nest deeper than any JSON body Kiln accepts; the depth scan is work. */
function checkDepth(operation: Operation, at: number, value: JsonNode, budget: PatchBudget): JsonNode {
  budget.spend(sizeOf(value), operation);
  if (at + depthOf(value) > MAX_JSON_DEPTH) throw invalid(operation, `the result would nest deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}
