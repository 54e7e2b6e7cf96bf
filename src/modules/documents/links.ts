/**
 * Signed download links (extensions.md §1). `POST /api/v1/documents/{id}/links` (permission `documents`)
 * makes a URL that anyone may GET without a key until it expires:
 *
 *   /links/{id}?v={content tag}&expires={epoch ms}&sig={HMAC-SHA256, base64url}
 *
 * The signature covers the document id, a tag of its content key and the expiry. The content key is new
 * on every content write, so a link serves exactly the content it was made for and stops working once
 * the content changes or the document is deleted. The HMAC key is a secret in the database
 * (cluster_secrets), created by the first node that needs it, so every node accepts every link.
 */
import { timingSafeEqual } from "node:crypto";
import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { clusterSecrets } from "../../db/schema";
import { requirePrincipal, type AuthPlugin } from "../../http/auth";
import { Value } from "@sinclair/typebox/value";
import { fromValidation, HttpError } from "../../http/errors";
import { operation } from "../../http/openapi";
import { downloadResponse } from "./download";
import { getDocument, type DocumentsDeps } from "./service";

export const LINK_EXPIRES_IN_MIN = 60;
export const LINK_EXPIRES_IN_MAX = 86_400;
export const LINK_EXPIRES_IN_DEFAULT = 3_600;

const SECRET_NAME = "download_links";
const TAG = /^[0-9a-f]{16}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;
const EXPIRY = /^[0-9]{1,15}$/;

/** The link secret of a database: read, or created once (the first insert wins; every node reads it back). */
export function linkSecretOf(db: Db, now: () => number): () => Promise<Uint8Array> {
  let loading: Promise<Uint8Array> | undefined;
  const load = async () => {
    const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    await db.insert(clusterSecrets).values({ name: SECRET_NAME, secret: fresh, createdAt: now() }).onConflictDoNothing();
    const [row] = await db.select({ secret: clusterSecrets.secret }).from(clusterSecrets).where(eq(clusterSecrets.name, SECRET_NAME));
    return Buffer.from(row.secret, "base64");
  };
  return () => {
    loading ??= load().catch((error) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/** A short public tag of a content key: it changes with every content write and reveals nothing of the key. */
const contentTag = (contentKey: string) => new Bun.CryptoHasher("sha256").update(contentKey).digest("hex").slice(0, 16);

const sign = (secret: Uint8Array, id: string, tag: string, expires: number) =>
  new Bun.CryptoHasher("sha256", secret).update(`${id}\n${tag}\n${expires}`).digest("base64url");

const linkInvalid = () => new HttpError(403, "link_invalid", "The download link is not valid: it is incomplete or was altered");
const linkExpired = (expires: number) => new HttpError(410, "link_expired", `The download link expired at ${new Date(expires).toISOString()}; ask for a new one`);
const linkOutdated = () => new HttpError(410, "link_outdated", "The document was deleted or its content changed since the link was made; ask for a new one");

export interface LinksDeps extends DocumentsDeps {
  linkSecret: () => Promise<Uint8Array>;
  /** the base of link URLs (PUBLIC_URL); undefined: the origin the request came in on */
  publicUrl: string | undefined;
}

export async function createLink(deps: LinksDeps, accountId: string, id: string, expiresInSeconds: number, origin: string): Promise<{ url: string; expiresAt: number }> {
  const row = await getDocument(deps, accountId, id);
  const expiresAt = deps.now() + expiresInSeconds * 1000;
  const tag = contentTag(row.contentKey);
  const signature = sign(await deps.linkSecret(), row.id, tag, expiresAt);
  const base = deps.publicUrl ?? origin;
  return { url: `${base}/links/${encodeURIComponent(row.id)}?v=${tag}&expires=${expiresAt}&sig=${signature}`, expiresAt };
}

export interface LinkQuery { v?: string; expires?: string; sig?: string }

/** Checks a link (403 altered, 410 expired or outdated) and opens the content it names. */
export async function openLinked(deps: LinksDeps, id: string, query: LinkQuery) {
  const { v: tag, expires: expiresText, sig } = query;
  if (!tag || !TAG.test(tag) || !expiresText || !EXPIRY.test(expiresText) || !sig || !SIGNATURE.test(sig)) throw linkInvalid();
  const expires = Number(expiresText);
  const expected = Buffer.from(sign(await deps.linkSecret(), id, tag, expires));
  if (!timingSafeEqual(expected, Buffer.from(sig))) throw linkInvalid();
  if (expires <= deps.now()) throw linkExpired(expires);
  const row = await deps.repository.findActiveById(id);
  if (!row || contentTag(row.contentKey) !== tag) throw linkOutdated();
  const content = await deps.store.open(row.contentKey);
  if (!content) throw linkOutdated(); // replaced between reading the row and opening the content
  return { row, content };
}

const CreateLinkBody = t.Object({
  expiresIn: t.Optional(Type.Integer({ minimum: LINK_EXPIRES_IN_MIN, maximum: LINK_EXPIRES_IN_MAX, description: `seconds until the link expires (default ${LINK_EXPIRES_IN_DEFAULT})` })),
}, { additionalProperties: false });

/**
 * The body is optional (an empty one takes the default), which a route `body` schema cannot say without
 * a non-JSON-Schema `undefined` type, so the parsed body is checked here, with the same 400 as a schema.
 */
function expiresInOf(body: unknown): number {
  if (body === undefined) return LINK_EXPIRES_IN_DEFAULT;
  if (!Value.Check(CreateLinkBody, body)) throw fromValidation({ validator: CreateLinkBody, value: body, message: "invalid body" }, "body");
  return body.expiresIn ?? LINK_EXPIRES_IN_DEFAULT;
}

export const documentLinksModule = (deps: LinksDeps & { auth: AuthPlugin }) =>
  new Elysia({ name: "kiln.documents.links", detail: { tags: ["Documents"] } })
    .use(deps.auth)
    .post("/api/v1/documents/:id/links", async ({ principal, params, body, request, set }) => {
      const link = await createLink(deps, requirePrincipal(principal).accountId, params.id, expiresInOf(body), new URL(request.url).origin);
      set.status = 201;
      return { success: true as const, ...link };
    }, {
      params: t.Object({ id: t.String() }),
      response: {
        201: t.Object({ success: t.Literal(true), url: t.String({ description: "GET it without a key until expiresAt" }), expiresAt: Type.Integer({ description: "epoch ms" }) }),
      },
      detail: operation({
        operationId: "createDocumentLink",
        summary: "Make a signed download link",
        description: `A URL that serves the document's current content without a key, on every node, until it expires (${LINK_EXPIRES_IN_MIN} to ${LINK_EXPIRES_IN_MAX} s, default ${LINK_EXPIRES_IN_DEFAULT}; the body may be empty). It stops working when the document is deleted or its content changes.`,
        requestBody: { description: "optional: an empty body takes the default expiry", content: { "application/json": CreateLinkBody } },
        errors: { 404: "document_not_found" },
      }),
    })
    .get("/links/:id", async ({ params, query, request, set }) => {
      const { row, content } = await openLinked(deps, params.id, query);
      return downloadResponse(request, row, content, set.headers);
    }, {
      params: t.Object({ id: t.String() }),
      query: t.Object({
        v: t.Optional(t.String({ description: "tag of the content the link was made for" })),
        expires: t.Optional(t.String({ description: "epoch ms" })),
        sig: t.Optional(t.String({ description: "HMAC-SHA256 signature, base64url" })),
      }),
      response: { 200: t.Unknown({ description: "any JSON value" }), 304: t.Void() },
      detail: operation({
        operationId: "downloadThroughLink",
        summary: "Download through a signed link",
        description: "No key: the signature in the URL authorises the download. The stored bytes, with Content-Length and Content-Disposition: attachment; ETag is the content hash, If-None-Match gives 304.",
        errors: {
          403: "link_invalid: a parameter is missing or malformed, or the signature does not match",
          410: "link_expired: past its expiry; link_outdated: the document was deleted or its content changed since the link was made",
        },
        headers: { 200: ["ETag", "Content-Disposition"] },
        conditional: ["If-None-Match"],
        notModified: true,
      }),
    });
