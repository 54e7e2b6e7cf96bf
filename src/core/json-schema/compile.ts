/**
 * Compiling a JSON Schema (draft 2020-12) into what the interpreter (./validate.ts) walks: the schema's
 * resources (its `$id`s) and anchors, every `$ref` resolved once, every `pattern` compiled on re2js (a
 * linear-time engine). Nothing is turned into code and nothing is fetched: a `$ref` may name the schema
 * itself, a schema it embeds, the draft's own meta-schemas, or a schema handed in by the caller (another
 * schema of the same account, by its `$id` or its `urn:kiln:schema:<id>`); anything else is refused
 * with the pointer of the `$ref`. Compiling only reads the schema, so its cost is linear in its size,
 * which the caller bounds.
 */

import { RE2JS } from "re2js";
import META_SCHEMAS from "./metaschema-2020-12.json";
import { isObject, type Json, pointerToken, unescapePointerToken } from "./values";

export type SchemaNode = boolean | { [key: string]: Json };

export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
const VOCAB = "https://json-schema.org/draft/2020-12/vocab/";
/** The vocabularies Kiln implements; format and content are annotations only, as 2020-12 says by default. */
const KNOWN_VOCABULARIES = new Set(
  ["core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation", "content"].map((name) => VOCAB + name),
);

export interface Resource {
  uri: string;
  root: SchemaNode;
  anchors: Map<string, SchemaNode>;
  dynamicAnchors: Set<string>;
}

export interface CompiledSchema {
  root: SchemaNode;
  /** the resource each object schema belongs to: its base URI and the dynamic scope it opens */
  resourceOf: Map<object, Resource>;
  refs: Map<object, SchemaNode>;
  dynamicRefs: Map<object, { target: SchemaNode; anchor?: string }>;
  patterns: Map<string, RE2JS>;
  /** false when the schema's meta-schema leaves the validation vocabulary out: its keywords are ignored */
  validationVocabulary: boolean;
  /** annotations are gathered only when some schema reads them */
  tracksProperties: boolean;
  tracksItems: boolean;
}

export interface SchemaProblem {
  pointer: string;
  message: string;
}

export class SchemaCompileError extends Error {
  constructor(readonly problems: SchemaProblem[]) {
    super(problems.map((p) => `${p.pointer || "/"}: ${p.message}`).join("; "));
  }
}

export type CompileOutcome = { kind: "compiled"; schema: CompiledSchema } | { kind: "missing"; uris: string[] };

const SCHEMA_MAPS = ["$defs", "definitions", "properties", "patternProperties", "dependentSchemas"];
const SCHEMA_ARRAYS = ["prefixItems", "allOf", "anyOf", "oneOf"];
const SCHEMA_VALUES = [
  "items",
  "additionalProperties",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
  "not",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];

const withoutFragment = (uri: string) => uri.split("#")[0];

function resolveUri(reference: string, base: string): string | undefined {
  try {
    return new URL(reference, base).href;
  } catch {
    return undefined;
  }
}

interface Scan {
  resources: Map<string, Resource>;
  resourceOf: Map<object, Resource>;
  pending: { node: { [key: string]: Json }; keyword: "$ref" | "$dynamicRef"; uri: string; pointer: string }[];
  patterns: Map<string, RE2JS>;
  problems: SchemaProblem[];
  maxDepth: number;
  tracksProperties: boolean;
  tracksItems: boolean;
}

/** ECMA-262's long Unicode property names (what JSON Schema's patterns use) as RE2 spells them. */
const PROPERTY_NAMES: Record<string, string> = {
  Letter: "L",
  Cased_Letter: "L",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Separator: "Z",
  Space_Separator: "Zs",
  Other: "C",
  Control: "Cc",
};

const re2Source = (source: string) =>
  source.replace(
    /\\([pP])\{(?:(?:Script|sc|General_Category|gc)=)?([A-Za-z_]+)\}/g,
    (_match, p: string, name: string) => `\\${p}{${PROPERTY_NAMES[name] ?? name}}`,
  );

function compilePattern(scan: Scan, source: string, pointer: string): void {
  if (scan.patterns.has(source)) return;
  try {
    scan.patterns.set(source, RE2JS.compile(re2Source(source)));
  } catch (error) {
    scan.problems.push({
      pointer,
      message: `not a pattern the linear-time engine runs (RE2 syntax: no lookaround or backreferences): ${(error as Error).message}`,
    });
  }
}

/** Registers the resources, anchors and references under `node` (prefix: its pointer in its document). */
function scanNode(scan: Scan, node: Json, base: Resource, pointer: string, depth: number): void {
  if (!isObject(node)) return;
  if (depth > scan.maxDepth) {
    scan.problems.push({ pointer, message: `schemas nest at most ${scan.maxDepth} levels deep` });
    return;
  }
  let resource = base;
  if (typeof node.$id === "string" && depth > 0) {
    const uri = resolveUri(node.$id, base.uri);
    if (!uri) scan.problems.push({ pointer: `${pointer}/$id`, message: "not a URI reference that resolves against its base" });
    else {
      resource = { uri: withoutFragment(uri), root: node, anchors: new Map(), dynamicAnchors: new Set() };
      scan.resources.set(resource.uri, resource);
    }
  }
  scan.resourceOf.set(node, resource);
  if (typeof node.$anchor === "string") resource.anchors.set(node.$anchor, node);
  if (typeof node.$dynamicAnchor === "string") {
    resource.anchors.set(node.$dynamicAnchor, node);
    resource.dynamicAnchors.add(node.$dynamicAnchor);
  }
  for (const keyword of ["$ref", "$dynamicRef"] as const) {
    const reference = node[keyword];
    if (typeof reference !== "string") continue;
    const uri = resolveUri(reference, resource.uri);
    if (uri) scan.pending.push({ node, keyword, uri, pointer: `${pointer}/${keyword}` });
    else
      scan.problems.push({
        pointer: `${pointer}/${keyword}`,
        message: `'${reference}' does not resolve against the base URI ${resource.uri}`,
      });
  }
  if (typeof node.pattern === "string") compilePattern(scan, node.pattern, `${pointer}/pattern`);
  if (isObject(node.patternProperties))
    for (const key of Object.keys(node.patternProperties)) compilePattern(scan, key, `${pointer}/patternProperties/${pointerToken(key)}`);
  if (node.unevaluatedProperties !== undefined) scan.tracksProperties = true;
  if (node.unevaluatedItems !== undefined) scan.tracksItems = true;
  for (const keyword of SCHEMA_MAPS) {
    const map = node[keyword];
    if (isObject(map))
      for (const [key, child] of Object.entries(map))
        scanNode(scan, child, resource, `${pointer}/${keyword}/${pointerToken(key)}`, depth + 1);
  }
  for (const keyword of SCHEMA_ARRAYS) {
    const list = node[keyword];
    if (Array.isArray(list))
      for (let index = 0; index < list.length; index++) scanNode(scan, list[index], resource, `${pointer}/${keyword}/${index}`, depth + 1);
  }
  for (const keyword of SCHEMA_VALUES) scanNode(scan, node[keyword], resource, `${pointer}/${keyword}`, depth + 1);
}

function scanDocument(scan: Scan, document: SchemaNode, retrievalUri: string): void {
  const declared = isObject(document) && typeof document.$id === "string" ? resolveUri(document.$id, retrievalUri) : undefined;
  const uri = withoutFragment(declared ?? retrievalUri);
  const resource: Resource = { uri, root: document, anchors: new Map(), dynamicAnchors: new Set() };
  scan.resources.set(uri, resource);
  if (uri !== retrievalUri) scan.resources.set(retrievalUri, resource);
  scanNode(scan, document as Json, resource, "", 0);
}

/** The node a URI with its fragment names, or why none. */
function locate(scan: Scan, uri: string): SchemaNode | string | undefined {
  const at = uri.indexOf("#");
  const resource = scan.resources.get(at < 0 ? uri : uri.slice(0, at));
  if (!resource) return undefined;
  let fragment = at < 0 ? "" : uri.slice(at + 1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    return `'${uri}' has a malformed fragment`;
  }
  if (fragment === "") return resource.root;
  if (!fragment.startsWith("/")) return resource.anchors.get(fragment) ?? `'${uri}' names no anchor of ${resource.uri}`;
  let node: Json = resource.root as Json;
  for (const token of fragment.slice(1).split("/").map(unescapePointerToken)) {
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) node = node[Number(token)];
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return `'${uri}' points at nothing in ${resource.uri}`;
  }
  if (typeof node !== "boolean" && !isObject(node)) return `'${uri}' points at something that is not a schema`;
  // a pointer into a keyword this scan does not know (an unknown keyword's value): scanned now, in its resource
  if (isObject(node) && !scan.resourceOf.has(node)) scanNode(scan, node, resource, "", 1);
  return node;
}

export interface CompileOptions {
  /** the URI the schema was retrieved under, its base when it has no `$id` */
  uri: string;
  /** other schemas a `$ref` may name, by URI (the account's), already parsed */
  known: ReadonlyMap<string, SchemaNode>;
  maxDepth: number;
  /** true once the caller has looked up every URI it could: a reference still unknown is then a problem */
  final: boolean;
}

/** Vocabularies of a custom meta-schema: unknown required ones refuse the schema. */
function vocabularyOf(scan: Scan, schema: SchemaNode, options: CompileOptions, missing: Set<string>): boolean {
  if (!isObject(schema) || schema.$schema === undefined || schema.$schema === DRAFT_2020_12) return true;
  const metaUri = typeof schema.$schema === "string" ? withoutFragment(schema.$schema) : undefined;
  const meta = metaUri === undefined ? undefined : options.known.get(metaUri);
  if (metaUri !== undefined && meta === undefined && !options.final) {
    missing.add(metaUri);
    return true;
  }
  if (!isObject(meta) || !isObject(meta.$vocabulary)) {
    scan.problems.push({
      pointer: "/$schema",
      message: `'${String(schema.$schema)}' is not a supported dialect: Kiln validates JSON Schema 2020-12 (${DRAFT_2020_12}), or a meta-schema of the account that declares 2020-12 vocabularies`,
    });
    return true;
  }
  for (const [vocabulary, required] of Object.entries(meta.$vocabulary))
    if (required === true && !KNOWN_VOCABULARIES.has(vocabulary))
      scan.problems.push({
        pointer: "/$schema",
        message: `its meta-schema requires the vocabulary ${vocabulary}, which Kiln does not implement`,
      });
  return Object.hasOwn(meta.$vocabulary, `${VOCAB}validation`);
}

/**
 * Compiles `schema`. Throws SchemaCompileError naming each problem's pointer; answers `missing` with
 * the URIs of schemas it needs and was not given, for the caller to look up and compile again.
 */
export function compileSchema(schema: SchemaNode, options: CompileOptions): CompileOutcome {
  const scan: Scan = {
    resources: new Map(),
    resourceOf: new Map(),
    pending: [],
    patterns: new Map(),
    problems: [],
    maxDepth: options.maxDepth,
    tracksProperties: false,
    tracksItems: false,
  };
  scanDocument(scan, schema, options.uri);
  const missing = new Set<string>();
  const validationVocabulary = vocabularyOf(scan, schema, options, missing);
  const refs = new Map<object, SchemaNode>();
  const dynamicRefs = new Map<object, { target: SchemaNode; anchor?: string }>();
  const loaded = new Set<string>();
  for (let i = 0; i < scan.pending.length; i++) {
    const { node, keyword, uri, pointer } = scan.pending[i];
    let target = locate(scan, uri);
    const documentUri = withoutFragment(uri);
    if (target === undefined && !loaded.has(documentUri)) {
      const other = options.known.get(documentUri) ?? (META_SCHEMAS as unknown as Record<string, SchemaNode>)[documentUri];
      if (other !== undefined) {
        loaded.add(documentUri);
        scanDocument(scan, other, documentUri);
        target = locate(scan, uri);
      }
    }
    if (target === undefined) {
      if (!options.final) missing.add(documentUri);
      else scan.problems.push({ pointer, message: `'${uri}' is neither this schema, a meta-schema, nor another schema of the account` });
      continue;
    }
    if (typeof target === "string") {
      scan.problems.push({ pointer, message: target });
      continue;
    }
    if (keyword === "$ref") refs.set(node, target);
    else {
      const fragment = uri.includes("#") ? uri.slice(uri.indexOf("#") + 1) : "";
      const anchor = fragment && !fragment.startsWith("/") ? fragment : undefined;
      const initial = scan.resourceOf.get(target as object);
      dynamicRefs.set(node, { target, anchor: anchor && initial?.dynamicAnchors.has(anchor) ? anchor : undefined });
    }
  }
  if (scan.problems.length > 0) throw new SchemaCompileError(scan.problems.slice(0, 50));
  if (missing.size > 0) return { kind: "missing", uris: [...missing] };
  return {
    kind: "compiled",
    schema: {
      root: schema,
      resourceOf: scan.resourceOf,
      refs,
      dynamicRefs,
      patterns: scan.patterns,
      validationVocabulary,
      tracksProperties: scan.tracksProperties,
      tracksItems: scan.tracksItems,
    },
  };
}
