/**
 * Export and import as NDJSON, one document per line: `{"document": {metadata}, "content": <JSON>}`.
 * Both directions stream: an export reads rows in keyset batches and each content file as a stream, an
 * import reads the request body line by line and answers each line as soon as it is stored, so memory
 * stays flat whatever the number of documents (at most one document in flight).
 *
 * Content is embedded byte for byte. NDJSON cannot carry a line break inside a line, so content whose
 * stored text holds one (pretty-printed JSON) travels as `"contentText": "<the text as a JSON string>"`
 * instead: still exact, and import takes either form, as document create does.
 */

import { ERRORS } from "../../core/error-codes";
import { type FieldError, HttpError, httpError, validationError } from "../../core/errors";
import { parseJsonBytes } from "../../core/json/parse";
import { type FolderFilter, folderFilter } from "../../core/metadata";
import type { DocumentRow } from "../../db/schema";
import { joinedBytes } from "../../http/body";
import { isObject } from "../../utilities/shared/paths";
import type { CursorPosition } from "./cursor";
import type { SchemaWarnings } from "./schema-guard";
import { type CreateInput, createDocument, type DocumentsDeps, documentView } from "./service";

const EXPORT_BATCH = 100;
const LF = 0x0a,
  CR = 0x0d;
const encoder = new TextEncoder();

export interface ExportOptions {
  folder?: string;
  /** with a folder: its subfolders' documents too */
  recursive: boolean;
  deleted: boolean;
}

/** The export's selection, its folder checked and normalised. */
interface ExportSelection {
  folder?: FolderFilter;
  deleted: boolean;
}

/** Rows of the export, oldest first, fetched EXPORT_BATCH at a time. */
async function* exportedRows(deps: DocumentsDeps, accountId: string, options: ExportSelection): AsyncGenerator<DocumentRow> {
  let after: CursorPosition | undefined;
  for (;;) {
    const rows = await deps.repository.list(accountId, {
      deleted: options.deleted,
      folder: options.folder,
      after,
      limit: EXPORT_BATCH,
      oldestFirst: true,
    });
    yield* rows;
    if (rows.length < EXPORT_BATCH) return;
    const last = rows[rows.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/**
 * The content of a row as a Blob; a content update that replaced the file since the row was read is
 * followed; a document purged (or deleted) meanwhile is left out.
 */
async function contentOf(
  deps: DocumentsDeps,
  accountId: string,
  row: DocumentRow,
  deleted: boolean,
): Promise<{ row: DocumentRow; content: Blob } | undefined> {
  let current: DocumentRow | undefined = row;
  for (let attempt = 0; attempt < 5 && current; attempt++) {
    const opened = await deps.store.open(current.contentKey);
    if (opened) return { row: current, content: opened.body };
    if (deleted) return undefined;
    current = await deps.repository.findActive(accountId, row.id);
  }
  return undefined;
}

/** Lines of small documents are gathered into chunks of about this size (one allocation per chunk, not four per document). */
const EXPORT_CHUNK = 64 * 1024;

/** Bytes gathered into one chunk; a piece that would not fit is handed on after what was gathered. */
class Chunker {
  private buffer = new Uint8Array(EXPORT_CHUNK);
  private used = 0;

  /** Adds text (encoded in place) or bytes; returns the chunks to send before it, if it did not fit. */
  *add(piece: string | Uint8Array): Generator<Uint8Array> {
    const most = typeof piece === "string" ? piece.length * 3 : piece.byteLength;
    if (this.used + most > EXPORT_CHUNK) yield* this.flush();
    if (most > EXPORT_CHUNK) {
      yield typeof piece === "string" ? encoder.encode(piece) : piece;
      return;
    }
    if (typeof piece === "string") this.used += encoder.encodeInto(piece, this.buffer.subarray(this.used)).written;
    else {
      this.buffer.set(piece, this.used);
      this.used += piece.byteLength;
    }
  }

  *flush(): Generator<Uint8Array> {
    if (this.used === 0) return;
    yield this.buffer.subarray(0, this.used);
    this.buffer = new Uint8Array(EXPORT_CHUNK);
    this.used = 0;
  }
}

async function* exportChunks(deps: DocumentsDeps, accountId: string, options: ExportSelection): AsyncGenerator<Uint8Array> {
  const chunker = new Chunker();
  for await (const listed of exportedRows(deps, accountId, options)) {
    const found = await contentOf(deps, accountId, listed, options.deleted);
    if (!found) continue;
    const head = `{"document":${JSON.stringify(documentView(found.row))},`;
    if (found.content.size <= EXPORT_CHUNK) {
      const bytes = await found.content.bytes();
      if (bytes.indexOf(LF) === -1 && bytes.indexOf(CR) === -1) {
        yield* chunker.add(`${head}"content":`);
        yield* chunker.add(bytes);
        yield* chunker.add("}\n");
      } else {
        yield* chunker.add(`${head}"contentText":${JSON.stringify(new TextDecoder().decode(bytes))}}\n`);
      }
      continue;
    }
    yield* chunker.flush();
    yield* largeContentChunks(head, found.content);
  }
  yield* chunker.flush();
}

/**
 * A large content file streamed in its own chunks. Whether it holds a line break is known only once
 * it was read, so it is scanned first (streamed, not kept) and then streamed again into the line.
 */
async function* largeContentChunks(head: string, content: Blob): AsyncGenerator<Uint8Array> {
  let hasLineBreak = false;
  for await (const chunk of content.stream()) {
    if (chunk.indexOf(LF) !== -1 || chunk.indexOf(CR) !== -1) {
      hasLineBreak = true;
      break;
    }
  }
  if (!hasLineBreak) {
    yield encoder.encode(`${head}"content":`);
    for await (const chunk of content.stream()) yield chunk;
  } else {
    // The text becomes a JSON string: escaped chunk by chunk (a chunk may end inside a UTF-8 sequence).
    const decoder = new TextDecoder();
    yield encoder.encode(`${head}"contentText":"`);
    for await (const chunk of content.stream()) yield encoder.encode(stringBody(decoder.decode(chunk, { stream: true })));
    yield encoder.encode(stringBody(decoder.decode()) + '"');
  }
  yield encoder.encode("}\n");
}

/** A JSON string literal without its quotes. */
const stringBody = (text: string) => JSON.stringify(text).slice(1, -1);

/** GET /api/v1/export: the NDJSON stream (errors in the options are thrown before it starts). */
export function exportDocuments(deps: DocumentsDeps, accountId: string, options: ExportOptions): ReadableStream<Uint8Array> {
  const chunks = exportChunks(deps, accountId, { folder: folderFilter(options.folder, options.recursive), deleted: options.deleted });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

type Line = { number: number; bytes: Uint8Array } | { number: number; tooLong: true };

/**
 * The lines of a byte stream, numbered from 1. A line longer than maxBytes is not kept: its bytes are
 * skipped up to the next line break and it is reported as too long. Blank lines are skipped.
 */
export async function* ndjsonLines(body: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Line> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let tooLong = false;
  let number = 1;
  const finish = (): Line | undefined => {
    const line: Line | undefined = tooLong ? { number, tooLong: true } : size > 0 ? { number, bytes: joinedBytes(parts, size) } : undefined;
    parts = [];
    size = 0;
    tooLong = false;
    number++;
    return line && ("tooLong" in line || !isBlank(line.bytes)) ? line : undefined;
  };
  for await (const chunk of body) {
    let start = 0;
    for (;;) {
      const lineBreak = chunk.indexOf(LF, start);
      const end = lineBreak === -1 ? chunk.length : lineBreak;
      if (!tooLong && end > start) {
        if (size + end - start > maxBytes) {
          tooLong = true;
          parts = [];
          size = 0;
        } else {
          parts.push(chunk.slice(start, end));
          size += end - start;
        }
      }
      if (lineBreak === -1) break;
      const line = finish();
      if (line) yield line;
      start = lineBreak + 1;
    }
  }
  const last = finish();
  if (last) yield last;
}

function isBlank(bytes: Uint8Array): boolean {
  return bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === CR);
}

const METADATA_FIELDS = ["name", "description", "tags", "folder"] as const;

/** One import line → the input of document create; the line's bytes keep `content` exact. */
function createInputOf(bytes: Uint8Array): CreateInput {
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw httpError(ERRORS.malformed_json, parsed.message);
  const line = parsed.value;
  if (!isObject(line))
    throw validationError([{ path: "", message: 'each line must be a JSON object {"document": {...}, "content": ...}' }]);
  const document = line.document;
  if (!isObject(document)) throw validationError([{ path: "/document", message: "required: an object with at least name" }]);
  const errors: FieldError[] = [];
  const input: Record<string, unknown> = {};
  for (const field of METADATA_FIELDS) if (document[field] !== undefined) input[field] = document[field];
  if (typeof input.name !== "string")
    errors.push({ path: "/document/name", message: input.name === undefined ? "required field is missing" : "must be a string" });
  if (input.description !== undefined && input.description !== null && typeof input.description !== "string")
    errors.push({ path: "/document/description", message: "must be a string" });
  if (input.tags !== undefined && !(Array.isArray(input.tags) && input.tags.every((tag) => typeof tag === "string")))
    errors.push({ path: "/document/tags", message: "must be an array of strings" });
  if (input.folder !== undefined && input.folder !== null && typeof input.folder !== "string")
    errors.push({ path: "/document/folder", message: "must be a string or null" });
  if (line.contentText !== undefined && typeof line.contentText !== "string")
    errors.push({ path: "/contentText", message: "must be a string" });
  if (errors.length > 0) throw validationError(errors);
  if ("content" in line) input.content = line.content;
  if (line.contentText !== undefined) input.contentText = line.contentText;
  return input as unknown as CreateInput;
}

type LineErrors = Pick<HttpError["extra"], "errors" | "schema">;
type ImportResult =
  | { line: number; id: string; warnings?: SchemaWarnings["warnings"] }
  | { line: number; error: { code: string; detail: string } & LineErrors };

async function importLine(deps: DocumentsDeps, accountId: string, line: Line, maxLineBytes: number): Promise<ImportResult> {
  if ("tooLong" in line) return { line: line.number, error: { code: "line_too_large", detail: `The line exceeds ${maxLineBytes} bytes` } };
  try {
    const row = await createDocument(deps, accountId, createInputOf(line.bytes), line.bytes);
    return { line: line.number, id: row.id, ...(row.schemaWarnings ? { warnings: row.schemaWarnings.warnings } : {}) };
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const { errors, schema } = error.extra;
    return {
      line: line.number,
      error: { code: error.code, detail: error.message, ...(schema ? { schema } : {}), ...(errors ? { errors } : {}) },
    };
  }
}

/**
 * POST /api/v1/import: creates one document per line, in order, and streams one result line per
 * input line; a bad line gets its error and the next one goes on.
 */
export function importDocuments(
  deps: DocumentsDeps,
  accountId: string,
  body: ReadableStream<Uint8Array> | null,
  maxLineBytes: number,
): ReadableStream<Uint8Array> {
  const lines = ndjsonLines(body ?? emptyStream(), maxLineBytes);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await lines.next();
        if (next.done) return controller.close();
        controller.enqueue(encoder.encode(JSON.stringify(await importLine(deps, accountId, next.value, maxLineBytes)) + "\n"));
      },
      async cancel() {
        await lines.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

async function* emptyStream(): AsyncGenerator<Uint8Array> {}
