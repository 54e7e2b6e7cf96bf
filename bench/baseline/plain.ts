/**
 * The plain handlers: what a user would write by hand for the utility cases of bench/utilities.ts, with
 * no utility library: `await request.json()`, a projection, removal, replace, flatten or CSV conversion
 * written for the one configuration the bench uses, and `JSON.stringify`. bench/utilities.ts checks that each gives
 * Kiln's answer before anything is timed, so the two do the same work.
 */

type Row = Record<string, any>;

/** structure.pick-fields with `paths: ["id", "name", "address.city"]` (nested) or `["id", "name", "city"]` (flat). */
const pickNested = (records: Row[]) => records.map((r) => ({ id: r.id, name: r.name, address: { city: r.address.city } }));
const pickFlat = (records: Row[]) => records.map((r) => ({ id: r.id, name: r.name, city: r.city }));

/** structure.remove-fields with `paths: ["email", "address.geo"]` (nested) or `["email", "zip"]` (flat). */
const removeNested = (records: Row[]) =>
  records.map(({ email, ...rest }) => {
    const { geo, ...address } = rest.address;
    rest.address = address;
    return rest;
  });
const removeFlat = (records: Row[]) => records.map(({ email, zip, ...rest }) => rest);

/** structure.find-replace of "alpha" by "omega" in every string value. */
function replaceIn(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("alpha", "omega");
  if (Array.isArray(value)) return value.map(replaceIn);
  if (value === null || typeof value !== "object") return value;
  const out: Row = {};
  for (const key in value) out[key] = replaceIn((value as Row)[key]);
  return out;
}

/** structure.flatten-nest, mode flatten: keys joined with ".", array elements by index, empty containers kept. */
function flattenInto(out: Row, prefix: string, value: unknown): void {
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length > 0) {
      for (const key of keys) flattenInto(out, `${prefix}.${key}`, (value as Row)[key]);
      return;
    }
  }
  out[prefix] = value;
}
const flattenRecords = (records: Row[]) =>
  records.map((record) => {
    const out: Row = {};
    for (const key in record) flattenInto(out, key, record[key]);
    return out;
  });

/** convert.csv-to-json with its defaults: a header row, RFC 4180 quotes, numbers and booleans inferred. */
function csvToRecords(text: string): Row[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let at = 0;
  while (at < text.length) {
    let cell: string;
    if (text[at] === '"') {
      cell = "";
      for (at++; ; ) {
        const quote = text.indexOf('"', at);
        cell += text.slice(at, quote);
        at = quote + 1;
        if (text[at] !== '"') break;
        cell += '"';
        at++;
      }
    } else {
      let end = at;
      while (end < text.length && text[end] !== "," && text[end] !== "\n") end++;
      cell = text.slice(at, end);
      at = end;
    }
    row.push(cell);
    if (text[at] === ",") at++;
    else {
      rows.push(row);
      row = [];
      at++;
    }
  }
  const [header, ...body] = rows;
  const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
  const typed = (cell: string) =>
    cell === "true"
      ? true
      : cell === "false"
        ? false
        : number.test(cell) && Number.isSafeInteger(Math.trunc(Number(cell)))
          ? Number(cell)
          : cell;
  return body.map((cells) => {
    const record: Row = {};
    header!.forEach((name, column) => {
      record[name] = typed(cells[column] ?? "");
    });
    return record;
  });
}

/** convert.json-to-csv with its defaults, for flat records: the first record's keys as the header. */
function recordsToCsv(records: Row[]): string {
  const columns = Object.keys(records[0]!);
  const cell = (value: unknown) => {
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [columns.join(","), ...records.map((record) => columns.map((column) => cell(record[column])).join(","))].join("\n");
}

export const PLAIN: Record<string, (primary: any) => unknown> = {
  "pick-fields": pickNested,
  "pick-fields flat": pickFlat,
  "remove-fields": removeNested,
  "remove-fields flat": removeFlat,
  "find-replace": (records) => records.map(replaceIn),
  "find-replace flat": (records) => records.map(replaceIn),
  flatten: flattenRecords,
  "flatten flat": flattenRecords,
  "csv-to-json": csvToRecords,
  "json-to-csv": recordsToCsv,
};

/** The handler: the body as the utility request (`{inputs: {primary}, config}`), the answer shaped like Kiln's. */
export async function plainHandler(label: string, request: Request): Promise<Response> {
  const work = PLAIN[label];
  if (!work) return new Response(`no plain handler for ${label}`, { status: 404 });
  const body = (await request.json()) as { inputs: { primary: unknown } };
  return new Response(`{"success":true,"output":${JSON.stringify(work(body.inputs.primary))}}`, {
    headers: { "content-type": "application/json" },
  });
}
