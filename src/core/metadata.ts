/**
 * The metadata rules (docs/api.md, the document object), as pure functions. Every problem is collected, so one 400
 * names every offending field.
 */
import { type FieldError, validationError } from "./errors";

export const NAME_MAX = 100;
export const DESCRIPTION_MAX = 2000;
export const TAGS_MAX = 32;
export const TAG_MAX = 64;
export const FOLDER_MAX = 255;

const CONTROL = /\p{Cc}/u;
/** Descriptions are prose: tabs and line breaks are welcome, other control characters are not. */
const CONTROL_EXCEPT_WHITESPACE = /[^\P{Cc}\t\n\r]/u;

/** Lengths count characters (code points), not UTF-16 units. */
const lengthOf = (text: string) => [...text].length;

export interface MetadataInput {
  name?: string;
  description?: string | null;
  tags?: string[];
  folder?: string | null;
}

/** Normalised metadata: only the fields that were given; `description: null` clears it. */
export interface Metadata {
  name?: string;
  description?: string | null;
  tags?: string[];
  folder?: string | null;
}

function checkText(text: string, path: string, errors: FieldError[]): boolean {
  if (!text.isWellFormed()) {
    errors.push({ path, message: "must be valid Unicode (no lone surrogates)" });
    return false;
  }
  return true;
}

export function normalizeName(raw: string, errors: FieldError[], path = "/name"): string {
  const name = raw.trim();
  if (!checkText(name, path, errors)) return name;
  const length = lengthOf(name);
  if (length < 1) errors.push({ path, message: "must not be empty" });
  else if (length > NAME_MAX) errors.push({ path, message: `must be at most ${NAME_MAX} characters (got ${length})` });
  else if (CONTROL.test(name)) errors.push({ path, message: "must not contain control characters" });
  return name;
}

function normalizeDescription(raw: string | null, errors: FieldError[]): string | null {
  if (raw === null || raw === "") return null;
  if (!checkText(raw, "/description", errors)) return raw;
  const length = lengthOf(raw);
  if (length > DESCRIPTION_MAX)
    errors.push({ path: "/description", message: `must be at most ${DESCRIPTION_MAX} characters (got ${length})` });
  else if (CONTROL_EXCEPT_WHITESPACE.test(raw))
    errors.push({ path: "/description", message: "must not contain control characters other than tab and line breaks" });
  return raw;
}

function normalizeTags(raw: string[], errors: FieldError[]): string[] {
  const tags: string[] = [];
  raw.forEach((given, index) => {
    const path = `/tags/${index}`;
    const tag = given.trim();
    if (!checkText(tag, path, errors)) return;
    const length = lengthOf(tag);
    if (length < 1 || length > TAG_MAX) errors.push({ path, message: `must be 1 to ${TAG_MAX} characters` });
    else if (CONTROL.test(tag)) errors.push({ path, message: "must not contain control characters" });
    else if (!tags.includes(tag)) tags.push(tag);
  });
  if (tags.length > TAGS_MAX) errors.push({ path: "/tags", message: `at most ${TAGS_MAX} distinct tags (got ${tags.length})` });
  return tags;
}

/**
 * Leading, trailing and repeated `/` are removed; `.` and `..` segments, control characters and paths
 * over 255 characters are refused. `""`, `null` and a path of slashes only mean "no folder".
 */
export function normalizeFolder(raw: string | null, errors: FieldError[], path = "/folder"): string | null {
  if (raw === null) return null;
  const segments = raw.split("/").filter((segment) => segment !== "");
  const folder = segments.join("/");
  if (folder === "") return null;
  if (!checkText(folder, path, errors)) return folder;
  if (segments.some((segment) => segment === "." || segment === ".."))
    errors.push({ path, message: "segments '.' and '..' are not allowed" });
  else if (CONTROL.test(folder)) errors.push({ path, message: "must not contain control characters" });
  else if (lengthOf(folder) > FOLDER_MAX) errors.push({ path, message: `must be at most ${FOLDER_MAX} characters` });
  return folder;
}

/**
 * A `folder` query filter: the documents directly in `path`, or with `subfolders` those at any depth
 * below it too (`a` matches `a` and `a/b`, never `ab`).
 */
export interface FolderFilter {
  path: string;
  subfolders: boolean;
}

/**
 * The `folder` and `recursive` query parameters of the document list, the export and the events feed:
 * the normalised filter, or undefined for any folder (the whole tree, which `subfolders` cannot widen).
 */
export function folderFilter(raw: string | undefined, subfolders: boolean): FolderFilter | undefined {
  const errors: FieldError[] = [];
  const path = raw === undefined ? null : normalizeFolder(raw, errors, "/folder");
  if (errors.length > 0) throw validationError(errors.map((error) => ({ ...error, message: `${error.message} (query parameter folder)` })));
  return path === null ? undefined : { path, subfolders };
}

/** Throws one 400 naming every bad field; returns the normalised values of the fields given. */
export function normalizeMetadata(input: MetadataInput, errors: FieldError[] = []): Metadata {
  const metadata: Metadata = {};
  if (input.name !== undefined) metadata.name = normalizeName(input.name, errors);
  if (input.description !== undefined) metadata.description = normalizeDescription(input.description, errors);
  if (input.tags !== undefined) metadata.tags = normalizeTags(input.tags, errors);
  if (input.folder !== undefined) metadata.folder = normalizeFolder(input.folder, errors);
  if (errors.length > 0) throw validationError(errors);
  return metadata;
}

/** The ancestors of a folder and the folder itself: "a/b/c" → ["a", "a/b", "a/b/c"]. */
export function folderAndAncestors(folder: string): string[] {
  const segments = folder.split("/");
  return segments.map((_, index) => segments.slice(0, index + 1).join("/"));
}
