/** deploy/docker-compose.yml is a file docker-compose accepts, with the services docs/operations.md names. */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const composeFile = resolve(import.meta.dir, "../../deploy/docker-compose.yml");
const compose = Bun.which("docker-compose");

test.skipIf(!compose)("docker-compose config accepts deploy/docker-compose.yml: Kiln ×2, PostgreSQL, MinIO, Redis, nginx", () => {
  const checked = Bun.spawnSync([compose!, "-f", composeFile, "config", "-q"], { stderr: "pipe" });
  expect(checked.stderr.toString()).toBe("");
  expect(checked.exitCode).toBe(0);
  const services = Bun.spawnSync([compose!, "-f", composeFile, "config", "--services"]).stdout.toString().trim().split("\n").sort();
  expect(services).toEqual(["kiln-1", "kiln-2", "minio", "minio-bucket", "postgres", "proxy", "redis"]);
  const resolved = Bun.spawnSync([compose!, "-f", composeFile, "config"]).stdout.toString();
  for (const variable of ["DATABASE_URL: postgres://kiln:", "REDIS_URL: redis://redis:6379", "CONTENT_STORE: s3", "S3_ENDPOINT: http://minio:9000"]) {
    expect(resolved).toContain(variable);
  }
});
