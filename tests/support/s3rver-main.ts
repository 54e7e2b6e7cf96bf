/**
 * An s3rver (a small S3 implementation on the local file system) in its own process, for tests and the
 * bench: `bun tests/support/s3rver-main.ts <port> <directory> <bucket>`. Prints `ready <port>` once it
 * listens; SIGTERM stops it once its connections are closed (the tests SIGKILL it).
 */
import crypto from "node:crypto";
import fs from "node:fs";

// Two shims for what s3rver takes from Node and Bun does differently (this process runs only s3rver).
// Its listing walks folders expecting readdirSync's names in order, as Node's libuv gives them; Bun
// gives them in directory order, so a listing with max-keys would skip and repeat keys.
const readdirSync = fs.readdirSync as (...args: unknown[]) => unknown;
(fs as Record<string, unknown>).readdirSync = (...args: unknown[]) => {
  const names = readdirSync(...args);
  return Array.isArray(names) && names.every((name) => typeof name === "string") ? names.sort() : names;
};
// It encrypts its list continuation tokens with the cipher named "des", an alias Bun's crypto does
// not know (every truncated listing would answer 500); "des-cbc" is the same cipher.
for (const name of ["createCipheriv", "createDecipheriv"] as const) {
  const original = crypto[name] as (algorithm: string, ...rest: unknown[]) => unknown;
  (crypto as Record<string, unknown>)[name] = (algorithm: string, ...rest: unknown[]) => original(algorithm === "des" ? "des-cbc" : algorithm, ...rest);
}

// imported after the shims: fs-extra copies the fs functions when it loads
const { default: S3rver } = await import("s3rver");
const [port, directory, bucket] = process.argv.slice(2);
const server = new S3rver({ port: Number(port), address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
const { port: bound } = (await server.run()) as { port: number };
console.log(`ready ${bound}`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
