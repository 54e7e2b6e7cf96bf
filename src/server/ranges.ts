/**
 * Range requests (RFC 9110 §14), read as Bun.serve reads them on a file body, so Kiln's own answers
 * (document downloads) and the node listener's (src/server/node-listener.ts) agree with what Bun.serve
 * would send: one `bytes=` range (a multi-range or malformed header is ignored: the whole body), and
 * `If-Range` compared strongly with the body's ETag (a date or a weak tag never matches, as no
 * Last-Modified is sent).
 */

export type ByteRange = { start: number; end: number };

/**
 * A single `bytes=` range of a body of `size` bytes: undefined (serve it whole) for anything else,
 * "unsatisfiable" for a range that starts past the end (or the empty suffix `bytes=-0`).
 */
export function byteRange(header: string, size: number): ByteRange | "unsatisfiable" | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== "" && Number(match[2]) < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { start, end };
}

/** Whether `If-Range` lets the range apply: no header, or exactly the strong ETag of the body (RFC 9110 §13.1.5). */
export function ifRangeHolds(header: string | null | undefined, etag: string | null): boolean {
  if (header === null || header === undefined) return true;
  const validator = header.trim();
  return validator.startsWith('"') && validator === etag;
}

/**
 * The range a GET asks of a body of `size` bytes whose ETag is `etag`: undefined when the whole body is
 * the answer (no Range, another method, a range that cannot be read, If-Range not holding).
 */
export function requestedRange(request: Request, size: number, etag: string | null): ByteRange | "unsatisfiable" | undefined {
  if (request.method !== "GET") return undefined;
  const header = request.headers.get("range");
  if (header === null || !ifRangeHolds(request.headers.get("if-range"), etag)) return undefined;
  return byteRange(header, size);
}
