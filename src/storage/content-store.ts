/**
 * Where document content lives. Metadata (in the database) names a content key; the store holds the
 * bytes. Every content version gets a new key, so a row never points at a file that is being written.
 */

export interface StoredContent {
  key: string;
  size: number;
  /** hex SHA-256 of the bytes: the content ETag */
  hash: string;
}

export interface OpenedContent {
  size: number;
  /**
   * The content, read lazily when the response is sent. A Blob (Bun.file) rather than a stream: Bun then
   * sends it with sendfile and a Content-Length, which it drops for streamed bodies.
   */
  body: Blob;
}

export interface StoredFile {
  key: string;
  /** true for a write that never finished (a temp file left by a crash) */
  incomplete: boolean;
  modifiedAt: number;
}

export interface ContentStore {
  /** Writes the bytes under a fresh key; when it resolves they are complete and durable. */
  put(bytes: Uint8Array): Promise<StoredContent>;
  /** undefined when no content has this key */
  open(key: string): Promise<OpenedContent | undefined>;
  /** Removes the content (or an incomplete write); a missing key is not an error. */
  remove(key: string): Promise<void>;
  /** Every file in the store, complete or not, for the orphan sweep. */
  list(): AsyncIterable<StoredFile>;
  /** A cheap round trip to the store; throws ContentStoreUnavailable when it cannot be used. */
  probe(): Promise<void>;
}

/**
 * The store cannot be reached or refuses service (a bucket down, bad credentials): the operation may
 * succeed later. `setting` names the configuration variable most likely at fault, for start-up.
 */
export class ContentStoreUnavailable extends Error {
  constructor(
    message: string,
    readonly setting?: string,
  ) {
    super(message);
  }
}

/** The store has no room for the content (a full disk). */
export class ContentStoreFull extends Error {}

export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}
