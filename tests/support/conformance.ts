/**
 * Checks real responses against the OpenAPI document Kiln serves: the status must be declared for the
 * operation, the media type declared for that status, the body valid against the declared schema (with
 * every object closed, so an undeclared field fails), every required header present and every API header
 * sent declared, with a valid value.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";

type Json = Record<string, any>;

export interface Operation {
  id: string;
  method: string;
  path: string;
  pattern: RegExp;
  spec: Json;
}

/** Headers whose presence means something to a client: each one sent must be declared. */
const API_HEADERS = [
  "etag",
  "location",
  "content-disposition",
  "www-authenticate",
  "retry-after",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "x-request-id",
  "idempotent-replayed",
  "accept-ranges",
  "content-range",
  "allow",
  "kiln-schema-warnings",
];

/**
 * Every object schema closed (additionalProperties: false unless it says otherwise), refs pointed at
 * $defs. The parts of an allOf stay open: each narrows the same object (a Problem and its code enum).
 */
function strictify(schema: unknown, open = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => strictify(item, open));
  if (schema === null || typeof schema !== "object") return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref" && typeof value === "string") copy.$ref = value.replace("#/components/schemas/", "#/$defs/");
    else if (key === "properties")
      copy.properties = Object.fromEntries(Object.entries(value as Json).map(([name, member]) => [name, strictify(member)]));
    else if (key === "const" || key === "enum" || key === "default" || key === "examples") copy[key] = value;
    else copy[key] = strictify(value, key === "allOf");
  }
  if (!open && copy.type === "object" && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

export class ConformanceChecker {
  readonly operations: Operation[] = [];
  private readonly ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly defs: Json;

  constructor(readonly document: Json) {
    this.defs = strictify(document.components?.schemas ?? {}) as Json;
    for (const [path, item] of Object.entries(document.paths as Json)) {
      for (const [method, spec] of Object.entries(item as Json)) {
        const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
        this.operations.push({ id: spec.operationId, method: method.toUpperCase(), path, pattern, spec });
      }
    }
  }

  operation(id: string): Operation {
    const found = this.operations.find((op) => op.id === id);
    if (!found) throw new Error(`no operation ${id} in the document`);
    return found;
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile({ ...(strictify(schema) as Json), $defs: this.defs });
      this.validators.set(key, validate);
    }
    return validate;
  }

  private resolveHeader(header: Json): Json {
    if (typeof header.$ref === "string") return this.document.components.headers[header.$ref.split("/").pop()!];
    return header;
  }

  /** Every way the response departs from what `operationId` declares; empty when it conforms. */
  async check(operationId: string, method: string, url: string, response: Response): Promise<string[]> {
    const op = this.operation(operationId);
    const path = new URL(url, "http://localhost").pathname;
    const problems: string[] = [];
    if (op.method !== method.toUpperCase() || !op.pattern.test(path))
      problems.push(`${method} ${path} is not ${operationId} (${op.method} ${op.path})`);
    const declared = op.spec.responses?.[String(response.status)];
    const body = new Uint8Array(await response.arrayBuffer());
    if (!declared) return [...problems, `status ${response.status} is not declared for ${operationId}`];

    const headers = declared.headers ?? {};
    const declaredNames = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    for (const [name, raw] of Object.entries(headers as Json)) {
      const header = this.resolveHeader(raw);
      const value = response.headers.get(name);
      if (value === null) {
        if (raw.required) problems.push(`required header ${name} is missing (status ${response.status})`);
        continue;
      }
      const schema = header.schema ?? {};
      const typed = schema.type === "integer" ? (/^-?\d+$/.test(value) ? Number(value) : value) : value;
      const validate = this.validator(`header ${name}`, schema);
      if (!validate(typed)) problems.push(`header ${name}: ${value} does not match ${JSON.stringify(schema)}`);
    }
    for (const name of API_HEADERS) {
      if (response.headers.has(name) && !declaredNames.has(name))
        problems.push(`header ${name} is sent but not declared (status ${response.status})`);
    }

    const content = declared.content as Json | undefined;
    if (!content) {
      if (body.byteLength > 0) problems.push(`status ${response.status} declares no body but ${body.byteLength} bytes came`);
      return problems;
    }
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0].trim();
    const media = content[mediaType];
    if (!media)
      return [
        ...problems,
        `media type '${mediaType}' is not declared for status ${response.status} (declared: ${Object.keys(content).join(", ")})`,
      ];
    if (!mediaType.endsWith("json")) return problems;
    // NDJSON: the body is text; each line is checked against the line schema (x-itemSchema)
    if (mediaType === "application/x-ndjson") {
      if (!media["x-itemSchema"]) return [...problems, `the NDJSON body of ${operationId} ${response.status} declares no x-itemSchema`];
      return [...problems, ...this.checkLines(`${operationId} ${response.status} ${mediaType}`, media["x-itemSchema"], body)];
    }
    // 206: a slice of the JSON text, not JSON on its own
    if (response.status === 206) return problems;
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(body));
    } catch {
      return [...problems, `the ${mediaType} body is not JSON`];
    }
    const validate = this.validator(`${operationId} ${response.status} ${mediaType}`, media.schema ?? {});
    if (!validate(value)) {
      problems.push(
        `body does not match the declared schema: ${this.ajv.errorsText(validate.errors)}: ${JSON.stringify(value).slice(0, 300)}`,
      );
    }
    return problems;
  }

  /** NDJSON: each line is checked against the declared schema on its own. */
  private checkLines(key: string, schema: unknown, body: Uint8Array): string[] {
    const validate = this.validator(key, schema);
    const problems: string[] = [];
    new TextDecoder()
      .decode(body)
      .split("\n")
      .forEach((line, index) => {
        if (line.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          problems.push(`line ${index + 1} of the NDJSON body is not JSON`);
          return;
        }
        if (!validate(value))
          problems.push(
            `line ${index + 1} does not match the declared schema: ${this.ajv.errorsText(validate.errors)}: ${line.slice(0, 300)}`,
          );
      });
    return problems;
  }
}
