/**
 * The import graph of src/ and the rules it must keep: each layer imports only layers below it, no file
 * is part of an import cycle, and the utility worker loads no HTTP code (nothing from the server, http or
 * modules layers, and no Elysia). `bun run check:layers` prints the graph between layers and the breaches.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const SRC = resolve(import.meta.dir, "../../src");

/** Lowest first. A layer may import its own files and layers of a lower rank, never one of the same rank. */
export const LAYERS: Readonly<Record<string, number>> = {
  core: 0,
  config: 1,
  utilities: 1,
  db: 2,
  storage: 2,
  engine: 2,
  server: 3,
  observability: 4,
  http: 5,
  modules: 6,
  app: 7,
  process: 7,
  index: 8,
  cli: 9,
};

/**
 * Where the worker thread starts, and the registry it imports by URL when it starts (a dynamic import
 * the graph cannot see): everything these load must stay below HTTP.
 */
export const WORKER_ENTRIES = ["engine/worker.ts", "utilities/registry.ts"];
const WORKER_FORBIDDEN_LAYERS = new Set(["server", "http", "modules", "app", "index", "cli"]);
const WORKER_FORBIDDEN_PACKAGES = ["elysia", "@elysiajs/"];

export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}
export interface Graph {
  files: string[];
  edges: ImportEdge[];
  packages: Map<string, Set<string>>;
}

const SPECIFIER =
  /(?:^|[\s;])(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|new URL\(\s*["'](\.[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

function resolveImport(file: string, specifier: string): string | undefined {
  const base = resolve(SRC, dirname(file), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (candidate.endsWith(".ts") && statSync(candidate).isFile() && candidate.startsWith(SRC + "/")) return relative(SRC, candidate);
    } catch {
      /* not this one */
    }
  }
  return undefined;
}

/** Comments are blanked first so that an example in a comment is not an import. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

export function importGraph(): Graph {
  const files = sourceFiles(SRC).sort();
  const edges: ImportEdge[] = [];
  const packages = new Map<string, Set<string>>();
  for (const file of files) {
    const text = withoutComments(readFileSync(join(SRC, file), "utf8"));
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[3] ?? match[4] ?? match[5];
      if (specifier.startsWith(".")) {
        const target = resolveImport(file, specifier);
        if (target) edges.push({ from: file, to: target, typeOnly: match[2] !== undefined });
      } else {
        if (!packages.has(file)) packages.set(file, new Set());
        packages.get(file)!.add(specifier);
      }
    }
  }
  return { files, edges, packages };
}

export function layerOf(file: string): string {
  const first = file.split("/")[0].replace(/\.ts$/, "");
  if (!(first in LAYERS)) throw new Error(`${file} is in no layer: add its folder to LAYERS in tests/architecture/layers.ts`);
  return first;
}

/** Imports that go up or sideways between layers. */
export function upwardImports(graph: Graph): ImportEdge[] {
  return graph.edges.filter(({ from, to }) => {
    const [a, b] = [layerOf(from), layerOf(to)];
    return a !== b && LAYERS[b] >= LAYERS[a];
  });
}

/** Every import cycle among files (strongly connected components of more than one file, or a self-import). */
export function importCycles(graph: Graph): string[][] {
  const next = new Map<string, string[]>(graph.files.map((file) => [file, []]));
  for (const { from, to } of graph.edges) next.get(from)!.push(to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || next.get(file)!.includes(file)) cycles.push(component.sort());
    }
  };
  for (const file of graph.files) if (!index.has(file)) visit(file);
  return cycles;
}

/** What the worker thread loads that it must not: files of the HTTP layers and HTTP packages. */
export function workerBreaches(graph: Graph): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to, typeOnly } of graph.edges) if (!typeOnly) next.set(from, [...(next.get(from) ?? []), to]);
  const seen = new Set<string>(WORKER_ENTRIES);
  const queue = [...WORKER_ENTRIES];
  while (queue.length > 0) for (const to of next.get(queue.shift()!) ?? []) if (!seen.has(to)) seen.add(to), queue.push(to);
  const breaches: string[] = [];
  for (const file of seen) {
    if (WORKER_FORBIDDEN_LAYERS.has(layerOf(file))) breaches.push(`${file} (layer ${layerOf(file)})`);
    for (const name of graph.packages.get(file) ?? []) {
      if (WORKER_FORBIDDEN_PACKAGES.some((forbidden) => name === forbidden || name.startsWith(forbidden)))
        breaches.push(`${file} imports ${name}`);
    }
  }
  return breaches.sort();
}

/** Layer-to-layer import counts, for reading the architecture at a glance. */
export function layerGraph(graph: Graph): string[] {
  const counts = new Map<string, number>();
  for (const { from, to } of graph.edges) {
    const [a, b] = [layerOf(from), layerOf(to)];
    if (a !== b) counts.set(`${a} -> ${b}`, (counts.get(`${a} -> ${b}`) ?? 0) + 1);
  }
  const rank = (edge: string) => edge.split(" -> ").map((layer) => LAYERS[layer]);
  return [...counts]
    .sort(([x], [y]) => rank(y)[0] - rank(x)[0] || rank(y)[1] - rank(x)[1] || x.localeCompare(y))
    .map(([edge, count]) => `${edge} (${count})`);
}

if (import.meta.main) {
  const graph = importGraph();
  console.log(`${graph.files.length} files, ${graph.edges.length} imports between them`);
  console.log(layerGraph(graph).join("\n"));
  const upward = upwardImports(graph);
  const cycles = importCycles(graph);
  const worker = workerBreaches(graph);
  for (const { from, to } of upward) console.log(`upward import: ${from} -> ${to}`);
  for (const cycle of cycles) console.log(`import cycle: ${cycle.join(" <-> ")}`);
  for (const breach of worker) console.log(`the worker loads ${breach}`);
  console.log(`${upward.length} upward imports, ${cycles.length} cycles, ${worker.length} worker breaches`);
  process.exit(upward.length + cycles.length + worker.length === 0 ? 0 : 1);
}
