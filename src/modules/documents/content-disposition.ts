/**
 * `Content-Disposition: attachment` for a document name (RFC 6266). The quoted `filename` is an ASCII
 * fallback in which nothing can end the quoted string or the header: quotes, backslashes, control and
 * non-ASCII characters become `_` (accents are dropped first, so "Café" falls back to "Cafe"). When the
 * fallback differs from the name, `filename*=UTF-8''…` carries the exact name, percent-encoded.
 */

const UNSAFE_IN_QUOTED = /[^\x20-\x7e]|["\\%]/g;
const COMBINING_MARKS = /\p{M}/gu;

export function asciiFallback(name: string): string {
  return name.normalize("NFKD").replace(COMBINING_MARKS, "").replace(UNSAFE_IN_QUOTED, "_");
}

/** RFC 8187 ext-value: everything outside attr-char is percent-encoded. */
export function extValue(name: string): string {
  return "UTF-8''" + encodeURIComponent(name).replace(/['()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

export function contentDisposition(name: string): string {
  const fallback = asciiFallback(name);
  const header = `attachment; filename="${fallback}"`;
  return fallback === name ? header : `${header}; filename*=${extValue(name)}`;
}
