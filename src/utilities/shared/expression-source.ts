/**
 * Source checks done before parsing (expressions.ts): scans of the expression and template text,
 * outside string literals.
 */
export const MAX_EXPRESSION_DEPTH = 20;

/**
 * One pass over the source outside string literals: refuses brackets nested deeper than the limit
 * (jsep drops parentheses from its tree, so they are counted here) and rewrites index segments of
 * dotted paths (`items.0.sku`, which jsep cannot read) as `items[0].sku`.
 */
export function prepareSource(source: string, fail: (message: string) => never): string {
  let out = "";
  let depth = 0;
  let previous: "name" | "close" | "other" = "other";
  for (let i = 0; i < source.length; ) {
    const char = source[i];
    if (char === '"' || char === "'") {
      let end = i + 1;
      while (end < source.length && source[end] !== char) end += source[end] === "\\" ? 2 : 1;
      out += source.slice(i, end + 1);
      i = end + 1;
      previous = "other";
    } else if (/[A-Za-z_$]/.test(char)) {
      const name = /^[A-Za-z_$][\w$]*/.exec(source.slice(i))![0];
      out += name;
      i += name.length;
      previous = "name";
    } else if (/\d/.test(char) || (char === "." && /\d/.test(source[i + 1] ?? "") && previous === "other")) {
      const number = /^(\d*\.?\d*(e[+-]?\d+)?)/i.exec(source.slice(i))![0];
      out += number;
      i += number.length;
      previous = "other";
    } else if (char === "." && previous !== "other" && /^\.\d+(?![\w$])/.test(source.slice(i))) {
      const index = /^\.(\d+)/.exec(source.slice(i))!;
      out += `[${index[1]}]`;
      i += index[0].length;
      previous = "close";
    } else {
      if (char === "(" || char === "[") depth++;
      if (char === ")" || char === "]") depth--;
      if (depth > MAX_EXPRESSION_DEPTH) fail(`the expression is nested deeper than ${MAX_EXPRESSION_DEPTH} levels`);
      out += char;
      i++;
      if (!/\s/.test(char)) previous = char === ")" || char === "]" ? "close" : "other";
    }
  }
  return out;
}

/** Splits `text {{ expr }} text` into literal and expression parts; `}}` inside a quoted string does not close a part. */
export function splitTemplate(source: string, fail: (message: string) => never): (string | { expression: string })[] {
  const parts: (string | { expression: string })[] = [];
  let cursor = 0;
  while (cursor < source.length) {
    const open = source.indexOf("{{", cursor);
    if (open === -1) break;
    let end = open + 2;
    let quote: string | null = null;
    for (; end < source.length; end++) {
      const char = source[end];
      if (quote) {
        if (char === "\\") end++;
        else if (char === quote) quote = null;
      } else if (char === '"' || char === "'") quote = char;
      else if (char === "}" && source[end + 1] === "}") break;
    }
    if (end >= source.length) fail("a '{{' has no matching '}}'");
    if (open > cursor) parts.push(source.slice(cursor, open));
    parts.push({ expression: source.slice(open + 2, end) });
    cursor = end + 2;
  }
  if (cursor < source.length) parts.push(source.slice(cursor));
  return parts;
}
