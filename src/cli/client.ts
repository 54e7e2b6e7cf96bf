/**
 * The CLI's only way to the server: HTTP to KILN_URL with KILN_KEY. Never imports the server's
 * services or database, so the CLI works against any Kiln, local or remote.
 */

/** A failure to show the user: its detail goes to stderr and the process exits non-zero. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface Client {
  readonly baseUrl: string;
  /** resolves to a response with a 2xx status; anything else throws a CliError with the problem's detail */
  request(
    method: string,
    path: string,
    init?: { body?: RequestInit["body"]; contentType?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  /** request + the parsed JSON body */
  json<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

export function clientFromEnv(env: Record<string, string | undefined> = process.env): Client {
  const baseUrl = (env.KILN_URL || "http://localhost:3000").replace(/\/+$/, "");
  if (!/^https?:\/\//.test(baseUrl)) throw new CliError(`KILN_URL must be an http:// or https:// URL, got '${baseUrl}'`, 2);
  const key = env.KILN_KEY || undefined;

  const request: Client["request"] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    if (init.contentType) headers["content-type"] = init.contentType;
    let response: Response;
    try {
      response = await fetch(baseUrl + path, { method, headers, body: init.body, duplex: "half" } as RequestInit);
    } catch (error) {
      throw new CliError(`cannot reach ${baseUrl}: ${(error as Error).message}`);
    }
    if (response.ok) return response;
    throw new CliError(await problemMessage(response, key));
  };

  return {
    baseUrl,
    request,
    async json(method, path, body) {
      const response = await request(
        method,
        path,
        body === undefined ? {} : { body: JSON.stringify(body), contentType: "application/json" },
      );
      return response.json() as Promise<never>;
    },
  };
}

interface SuggestedIndex {
  folder: string;
  fields: { path: string; order?: string }[];
}

/** A query no index serves: the command that declares the index the server suggests. */
const indexCommand = (index: SuggestedIndex) =>
  `kiln indexes create --folder ${JSON.stringify(index.folder)} --fields ${JSON.stringify(
    index.fields.map((field) => `${field.path}${field.order === "desc" ? ":desc" : ""}`).join(","),
  )}`;

/** The problem's detail (and code), or the status line when the body is not a problem. */
async function problemMessage(response: Response, key: string | undefined): Promise<string> {
  const text = await response.text();
  let problem: { detail?: unknown; code?: unknown; suggestedIndex?: SuggestedIndex } | undefined;
  try {
    problem = JSON.parse(text);
  } catch {}
  const detail = typeof problem?.detail === "string" ? problem.detail : text.trim().slice(0, 500) || response.statusText;
  const code = typeof problem?.code === "string" ? ` (${problem.code})` : "";
  const suggested = problem?.suggestedIndex?.fields?.length ? `\nto serve it: ${indexCommand(problem.suggestedIndex)}` : "";
  const hint = response.status === 401 && !key ? "; set KILN_KEY to an API key" : suggested;
  return `${response.status}: ${detail}${code}${hint}`;
}
