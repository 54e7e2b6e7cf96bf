/**
 * Finds the exact bytes of one member's value in a JSON object text, so that create stores `content`
 * as written (integers beyond 2^53, `1.0`, `-0`, key order) instead of what JSON.parse made of it.
 * The text has already been parsed successfully, so the scanner may assume it is well formed.
 */
import { expand, findMember, isObject, type ObjectNode, type RawNode, readText } from "./tree";

/**
 * The value bytes of the member `name` of the top-level object, or undefined when there is none.
 * With duplicate names the last one wins, as in JSON.parse.
 */
export function memberValueSpan(bytes: Uint8Array, name: string): Uint8Array | undefined {
  const { root } = readText(bytes);
  if (!isObject(root)) return undefined;
  const object = expand(root) as ObjectNode;
  const at = findMember(object, name);
  if (at < 0) return undefined;
  const { source, start, end } = (object.members[at].value as RawNode).piece;
  return source.subarray(start, end);
}
