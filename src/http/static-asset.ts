/**
 * A file Kiln serves as is (the /docs viewer's 4.35 MB script), compressed as `Accept-Encoding` asks:
 * the br and gzip forms are made once, on the first request that wants each, at high settings (the file
 * never changes while the process runs), and kept in memory. The response compression of
 * server/compression.ts is for answers made per request (JSON, downloads) at fast settings; this is for
 * a file whose compressed form pays off on every request after the first.
 *
 * Each form has its own strong ETag (the file's SHA-256, with `-br`/`-gzip` for a compressed form, as
 * server/compression.ts tags them), `Vary: Accept-Encoding`, and `If-None-Match` gives 304.
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import { type Coding, negotiateCoding } from "../server/compression";

/** Brotli at 9: 4.35 MB → 1.05 MB in ~0.3 s, once (11 saves 10 % more for ~7 s). */
const BROTLI_QUALITY = 9;
const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

interface LoadedAsset {
  bytes: Uint8Array;
  /** the strong ETag of the file's bytes */
  etag: string;
  forms: Map<Coding, Promise<Uint8Array>>;
}

export interface StaticAsset {
  /** The answer to a GET or HEAD of the file. */
  answer(request: Request): Promise<Response>;
  /** how many times the file was compressed so far (once per coding asked for) */
  readonly compressions: number;
}

const compress = (bytes: Uint8Array, coding: Coding): Promise<Uint8Array> =>
  coding === "br"
    ? brotli(bytes, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
      })
    : gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION });

const codedTag = (etag: string, coding: Coding | undefined) => (coding ? `${etag.slice(0, -1)}-${coding}"` : etag);

/** Whether `If-None-Match` names `etag` (weak comparison, `*` for any). */
function ifNoneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}

/** `path`, read on first use (a process that never serves it never reads it). */
export function staticAsset(path: string, headers: { contentType: string; cacheControl: string }): StaticAsset {
  let loaded: Promise<LoadedAsset> | undefined;
  let compressions = 0;
  const load = () =>
    (loaded ??= Bun.file(path)
      .bytes()
      .then((bytes) => ({
        bytes,
        etag: `"${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}"`,
        forms: new Map<Coding, Promise<Uint8Array>>(),
      }))
      .catch((error: unknown) => {
        loaded = undefined; // a read that failed is tried again by the next request
        throw error;
      }));

  /** The compressed form, made once; undefined (serve the plain bytes) if compressing failed. */
  async function form(asset: LoadedAsset, coding: Coding): Promise<Uint8Array | undefined> {
    let made = asset.forms.get(coding);
    if (!made) {
      compressions++;
      made = compress(asset.bytes, coding);
      asset.forms.set(coding, made);
    }
    try {
      return await made;
    } catch {
      asset.forms.delete(coding);
      return undefined;
    }
  }

  return {
    get compressions() {
      return compressions;
    },
    async answer(request) {
      const asset = await load();
      const wanted = negotiateCoding(request.headers.get("accept-encoding"));
      const compressed = wanted === undefined ? undefined : await form(asset, wanted);
      const coding = compressed === undefined ? undefined : wanted;
      const etag = codedTag(asset.etag, coding);
      const common: Record<string, string> = { "Cache-Control": headers.cacheControl, Vary: "Accept-Encoding", ETag: etag };
      if (ifNoneMatchHits(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers: common });
      const body = compressed ?? asset.bytes;
      return new Response(body, {
        headers: {
          ...common,
          "Content-Type": headers.contentType,
          "Content-Length": String(body.byteLength),
          ...(coding ? { "Content-Encoding": coding } : {}),
        },
      });
    },
  };
}
