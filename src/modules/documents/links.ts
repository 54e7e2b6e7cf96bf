/**
 * Signed download links (extensions.md §1). `POST /api/v1/documents/{id}/links` (permission `documents`)
 * makes a URL that anyone may GET without a key until it expires:
 *
 *   /links/{id}?v={content tag}&expires={epoch ms}&sig={HMAC-SHA256, base64url}
 *
 * The signature covers the document id, a tag of its content key and link generation, and the expiry.
 * The content key is new on every content write and the generation on every restore, so a link serves
 * exactly the content it was made for and stops working for good once the content changes or the
 * document is deleted. An expiry further ahead than the longest lifetime is refused whatever its
 * signature. The base of the URL is PUBLIC_URL, or the server's own configured address, never the
 * request's Host header (which a client chooses). The HMAC key is a secret in the database
 * (cluster_secrets), created by the first node that needs it, so every node accepts every link.
 */
import { timingSafeEqual } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { eq } from "drizzle-orm";
import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { fromValidation, httpError } from "../../core/errors";
import type { Db } from "../../db/client";
import { clusterSecrets } from "../../db/schema";
import { operation } from "../../http/openapi";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { downloadResponse } from "./download";
import { type DocumentsDeps, getDocument } from "./service";

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

/** A short public tag of the content and its link generation: it changes with every content write and every restore, and reveals nothing of the key. */
const contentTag = (row: { contentKey: string; linkGeneration: number }) =>
  new Bun.CryptoHasher("sha256").update(`${row.contentKey}\n${row.linkGeneration}`).digest("hex").slice(0, 16);

const sign = (secret: Uint8Array, id: string, tag: string, expires: number) =>
  new Bun.CryptoHasher("sha256", secret).update(`${id}\n${tag}\n${expires}`).digest("base64url");

const linkInvalid = () => httpError(ERRORS.link_invalid, "The download link is not valid: it is incomplete or was altered");
const linkExpired = (expires: number) =>
  httpError(ERRORS.link_expired, `The download link expired at ${new Date(expires).toISOString()}; ask for a new one`);
const linkOutdated = () =>
  httpError(ERRORS.link_outdated, "The document was deleted or its content changed since the link was made; ask for a new one");

export interface LinksDeps extends DocumentsDeps {
  linkSecret: () => Promise<Uint8Array>;
  /** the base of link URLs: PUBLIC_URL, or the server's configured address (linkBaseOf) */
  linkBase: string;
}

/** PUBLIC_URL, else the address the server is configured to listen on (localhost for every interface). */
export function linkBaseOf(config: { publicUrl: string | undefined; host: string; port: number }): string {
  if (config.publicUrl) return config.publicUrl;
  const host =
    config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

export async function createLink(
  deps: LinksDeps,
  accountId: string,
  id: string,
  expiresInSeconds: number,
): Promise<{ url: string; expiresAt: number }> {
  const row = await getDocument(deps, accountId, id);
  const expiresAt = deps.now() + expiresInSeconds * 1000;
  const tag = contentTag(row);
  const signature = sign(await deps.linkSecret(), row.id, tag, expiresAt);
  return { url: `${deps.linkBase}/links/${encodeURIComponent(row.id)}?v=${tag}&expires=${expiresAt}&sig=${signature}`, expiresAt };
}

export interface LinkQuery {
  v?: string;
  expires?: string;
  sig?: string;
}

/** Checks a link (403 altered, 410 expired or outdated) and opens the content it names. */
export async function openLinked(deps: LinksDeps, id: string, query: LinkQuery) {
  const { v: tag, expires: expiresText, sig } = query;
  if (!tag || !TAG.test(tag) || !expiresText || !EXPIRY.test(expiresText) || !sig || !SIGNATURE.test(sig)) throw linkInvalid();
  const expires = Number(expiresText);
  const expected = Buffer.from(sign(await deps.linkSecret(), id, tag, expires));
  if (!timingSafeEqual(expected, Buffer.from(sig))) throw linkInvalid();
  if (expires <= deps.now()) throw linkExpired(expires);
  // no link is made to live longer; one that claims to (a leaked secret, a lifetime since shortened) is refused
  if (expires > deps.now() + LINK_EXPIRES_IN_MAX * 1000) throw linkInvalid();
  const row = await deps.repository.findActiveById(id);
  if (!row || contentTag(row) !== tag) throw linkOutdated();
  const content = await deps.store.open(row.contentKey);
  if (!content) throw linkOutdated(); // replaced between reading the row and opening the content
  return { row, content };
}

const CreateLinkBody = t.Object(
  {
    expiresIn: t.Optional(
      Type.Integer({
        minimum: LINK_EXPIRES_IN_MIN,
        maximum: LINK_EXPIRES_IN_MAX,
        description: `seconds until the link expires (default ${LINK_EXPIRES_IN_DEFAULT})`,
      }),
    ),
  },
  { additionalProperties: false },
);

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
    .post(
      "/api/v1/documents/:id/links",
      async ({ principal, params, body, set }) => {
        const link = await createLink(deps, requirePrincipal(principal).accountId, params.id, expiresInOf(body));
        set.status = 201;
        return { success: true as const, ...link };
      },
      {
        params: t.Object({ id: t.String() }),
        response: {
          201: t.Object({
            success: t.Literal(true),
            url: t.String({ description: "GET it without a key until expiresAt" }),
            expiresAt: Type.Integer({ description: "epoch ms" }),
          }),
        },
        detail: operation({
          operationId: "createDocumentLink",
          summary: "Make a signed download link",
          description: `A URL that serves the document's current content without a key, on every node, until it expires (${LINK_EXPIRES_IN_MIN} to ${LINK_EXPIRES_IN_MAX} s, default ${LINK_EXPIRES_IN_DEFAULT}; the body may be empty). It stops working for good when the document is deleted (a restore does not revive it) or its content changes. Its base is PUBLIC_URL (else the server's configured address), never the request's Host.`,
          requestBody: { description: "optional: an empty body takes the default expiry", content: { "application/json": CreateLinkBody } },
          errors: { 404: problems`${ERRORS.document_not_found}` },
        }),
      },
    )
    .get(
      "/links/:id",
      async ({ params, query, request, set }) => {
        const { row, content } = await openLinked(deps, params.id, query);
        return downloadResponse(request, row, content, set.headers);
      },
      {
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
          description:
            "No key: the signature in the URL authorises the download. The stored bytes, with Content-Length and Content-Disposition: attachment; ETag is the content hash, If-None-Match gives 304.",
          errors: {
            403: problems`${ERRORS.link_invalid}: a parameter is missing or malformed, or the signature does not match`,
            410: problems`${ERRORS.link_expired}: past its expiry; ${ERRORS.link_outdated}: the document was deleted or its content changed since the link was made`,
          },
          headers: { 200: ["ETag", "Content-Disposition"] },
          conditional: ["If-None-Match"],
          notModified: true,
          ranges: true,
        }),
      },
    );
