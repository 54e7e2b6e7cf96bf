/**
 * Generated, deterministic benchmark data: records with strings, numbers, nested objects and arrays,
 * sized to a byte target, and a CSV of the same records. Everything lands in .bench-data/ (gitignored).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { random } from "../../tests/support/random";

export const KB = 1024;
export const MB = 1024 * 1024;

export function benchDataDir(): string {
  const dir = resolve(import.meta.dir, "../../.bench-data");
  mkdirSync(dir, { recursive: true });
  return dir;
}

export const dataPath = (name: string) => join(benchDataDir(), name);

const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Niklaus"];
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Wirth"];
const CITIES = ["Lyon", "Porto", "Kyoto", "Austin", "Accra", "Quito", "Oslo", "Perth"];
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"];
const SKUS = ["SKU-1001", "SKU-2002", "SKU-3003", "SKU-4004", "SKU-5005"];

export interface BenchRecord {
  id: number;
  name: string;
  email: string;
  age: number;
  score: number;
  address: { street: string; city: string; zip: string; geo: { lat: number; lng: number } };
  tags: string[];
  orders: { sku: string; qty: number; price: number }[];
  note: string;
}

export function makeRecord(id: number, next: () => number): BenchRecord {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const first = pick(FIRST);
  const last = pick(LAST);
  const words = Array.from({ length: 4 + Math.floor(next() * 6) }, () => pick(WORDS));
  return {
    id,
    name: `${first} ${last}`,
    email: `${first.toLowerCase()}.${last.toLowerCase()}${id}@example.com`,
    age: 18 + Math.floor(next() * 60),
    score: Math.round(next() * 10_000) / 100,
    address: {
      street: `${1 + Math.floor(next() * 999)} ${pick(WORDS)} street`,
      city: pick(CITIES),
      zip: String(10_000 + Math.floor(next() * 89_999)),
      geo: { lat: Math.round((next() * 180 - 90) * 1e4) / 1e4, lng: Math.round((next() * 360 - 180) * 1e4) / 1e4 },
    },
    tags: Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(WORDS)),
    orders: Array.from({ length: 1 + Math.floor(next() * 3) }, () => ({
      sku: pick(SKUS),
      qty: 1 + Math.floor(next() * 9),
      price: Math.round(next() * 50_000) / 100,
    })),
    note: `${words.join(" ")}, call ${first} at +1 555 ${String(1_000_000 + id).slice(-7, -4)} ${String(1_000_000 + id).slice(-4)}`,
  };
}

/** Records whose JSON array text is about `bytes` long (never less than one record). */
export function recordsOfSize(bytes: number, seed = 7): BenchRecord[] {
  const next = random(seed);
  const records: BenchRecord[] = [];
  let size = 2;
  while (size < bytes || records.length === 0) {
    const record = makeRecord(records.length + 1, next);
    const length = JSON.stringify(record).length + 1;
    if (size + length > bytes && records.length > 0) break;
    records.push(record);
    size += length;
  }
  return records;
}

/** Records made by `make(id)` until their JSON array text reaches `bytes` (the last one may pass it). */
export function fillRecords<T>(bytes: number, make: (id: number) => T): T[] {
  const records: T[] = [];
  for (let size = 2, id = 0; size < bytes; id++) {
    const record = make(id);
    records.push(record);
    size += JSON.stringify(record).length + 1;
  }
  return records;
}

/** One flat row per record, for the CSV utilities (what a spreadsheet export holds). */
export function tabular(record: BenchRecord) {
  return {
    id: record.id,
    name: record.name,
    email: record.email,
    age: record.age,
    score: record.score,
    city: record.address.city,
    zip: record.address.zip,
    note: `${record.note} "quoted"`,
  };
}

const csvCell = (value: string | number) => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** RFC 4180 text of the tabular rows, about `bytes` long. */
export function csvOfSize(bytes: number, seed = 11): string {
  const next = random(seed);
  const header = Object.keys(tabular(makeRecord(0, random(0))));
  const lines = [header.join(",")];
  let size = lines[0].length + 1;
  for (let id = 1; size < bytes; id++) {
    const line = Object.values(tabular(makeRecord(id, next)))
      .map(csvCell)
      .join(",");
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n") + "\n";
}

/** A JSON document of about `bytes` bytes, for document downloads. */
export function documentText(bytes: number): string {
  return JSON.stringify(recordsOfSize(bytes, 3));
}

/** The documents loads' create body (`{"name":"created","content":…}`, 1 KB of records), written to .bench-data/`name`: its path. */
export function createBodyFile(name: string): string {
  const path = dataPath(name);
  writeFileSync(path, JSON.stringify({ name: "created", content: recordsOfSize(1 * KB) }));
  return path;
}

/** The documents loads' replace body (1 KB of other records than the create's), written to .bench-data/`name`: its path. */
export function replaceBodyFile(name: string): string {
  const path = dataPath(name);
  writeFileSync(path, JSON.stringify(recordsOfSize(1 * KB, 5)));
  return path;
}
