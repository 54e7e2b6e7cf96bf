/**
 * Standard Webhooks 1.0 signatures (https://www.standardwebhooks.com): `webhook-signature` holds
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the
 * secret (the base64 after `whsec_`); during a rotation's overlap one such signature per secret,
 * separated by spaces, and a receiver accepts the message when any one of them verifies.
 */
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
/** 32 random bytes: the spec asks for 24 to 64 */
const SECRET_BYTES = 32;

export const generateSecret = () => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");

/** One `v1,…` signature of the message with one secret. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The Standard Webhooks headers of one attempt: one signature per secret given (current first). */
export function webhookHeaders(secrets: string[], messageId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => sign(secret, messageId, timestampSeconds, body)).join(" "),
  };
}
