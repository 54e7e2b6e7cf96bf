/**
 * One webhook attempt over the network: the POST, the address checks that keep it off private networks,
 * and what is kept of the answer for the attempt log.
 */
import type { WebhookConfig } from "../../config";
import { AddressRefused, hostOf, type Lookup, type ResolvedAddress, resolvePublic, systemLookup } from "./address";

/** the answer's bytes kept for the attempt log */
export const RESPONSE_BODY_MAX_BYTES = 4096;
const USER_AGENT = "Kiln-Webhooks/1";

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
}

/** Reads at most `max` bytes of a body as text, then lets the rest go. */
async function readBounded(response: Response, max: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max));
}

/** What a failure says in the log: the error's own words, never a header or the body sent. */
function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof AddressRefused) return `refused: ${error.message}`;
  const name = (error as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") return `timeout: no answer within ${timeoutMs} ms`;
  const code = (error as { code?: string })?.code;
  const message = (error as Error)?.message ?? String(error);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 500);
}

/**
 * One attempt: POST the body with the headers to the URL, redirects not followed, WEBHOOK_TIMEOUT_MS for
 * all of it. Without WEBHOOK_ALLOW_PRIVATE_NETWORKS the host is resolved here, every address checked,
 * and the connection made to the checked address (the name goes in Host and, for https, in SNI and the
 * certificate check), so the address used is the address checked.
 */
export async function attempt(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: { config: WebhookConfig; lookup?: Lookup; refused?: (address: string) => string | undefined; tls?: { ca?: string } },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const { timeoutMs } = options.config;
  const signal = AbortSignal.timeout(timeoutMs);
  const done = (outcome: Omit<AttemptOutcome, "durationMs">): AttemptOutcome => ({
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const url = new URL(target);
    let connectTo = url;
    const sendHeaders: Record<string, string> = { "content-type": "application/json", "user-agent": USER_AGENT, ...headers };
    const tls: Record<string, unknown> = { ...options.tls };
    if (!options.config.allowPrivateNetworks) {
      if (url.protocol !== "https:") throw new AddressRefused("only https:// URLs are delivered to");
      const checked: ResolvedAddress[] = await Promise.race([
        resolvePublic(url, options.lookup ?? systemLookup, options.refused),
        new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      ]);
      const address = checked[0]!;
      connectTo = new URL(url.href);
      connectTo.hostname = address.family === 6 ? `[${address.address}]` : address.address;
      sendHeaders.host = url.host;
      tls.serverName = hostOf(url);
    }
    const response = await fetch(connectTo, {
      method: "POST",
      headers: sendHeaders,
      body,
      redirect: "manual",
      signal,
      // a pooled connection is keyed by the address: never reuse one made for another name's TLS session
      keepalive: options.config.allowPrivateNetworks,
      ...(Object.keys(tls).length > 0 ? { tls } : {}),
    } as RequestInit);
    const statusCode = response.status;
    let responseBody: string | null = null;
    try {
      responseBody = await readBounded(response, RESPONSE_BODY_MAX_BYTES);
    } catch {}
    if (statusCode >= 200 && statusCode < 300) return done({ statusCode, error: null, responseBody });
    const error =
      statusCode >= 300 && statusCode < 400
        ? `redirect ${statusCode} not followed${response.headers.get("location") ? ` (to ${response.headers.get("location")!.slice(0, 200)})` : ""}`
        : `status ${statusCode}`;
    return done({ statusCode, error, responseBody });
  } catch (error) {
    return done({ statusCode: null, error: reasonOf(error, timeoutMs), responseBody: null });
  }
}
