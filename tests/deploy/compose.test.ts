/** deploy/docker-compose.yml is a file docker-compose accepts, with the services docs/operations.md names. */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const composeFile = resolve(import.meta.dir, "../../deploy/docker-compose.yml");
const compose = Bun.which("docker-compose");

test.skipIf(!compose)(
  "docker-compose config accepts deploy/docker-compose.yml: Kiln ×2, PostgreSQL, MinIO, Redis, nginx",
  () => {
    // one run: `config` validates the file (exit 0, nothing on stderr) and prints it resolved
    const checked = Bun.spawnSync([compose!, "-f", composeFile, "config"], { stderr: "pipe", stdout: "pipe" });
    expect(checked.stderr.toString()).toBe("");
    expect(checked.exitCode).toBe(0);
    const resolved = `\n${checked.stdout.toString()}`;
    const servicesBlock = resolved.slice(resolved.indexOf("\nservices:\n"), resolved.indexOf("\nvolumes:\n"));
    const services = (servicesBlock.match(/^ {2}[a-z0-9-]+(?=:$)/gm) ?? []).map((name) => name.trim()).sort();
    expect(services).toEqual(["kiln-1", "kiln-2", "minio", "minio-bucket", "postgres", "proxy", "redis"]);
    for (const variable of [
      "DATABASE_URL: postgres://kiln:",
      "REDIS_URL: redis://redis:6379",
      "CONTENT_STORE: s3",
      "S3_ENDPOINT: http://minio:9000",
    ]) {
      expect(resolved).toContain(variable);
    }
  },
  120_000,
);
