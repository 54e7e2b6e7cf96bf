/** The one place that picks the content store from the configuration; services only see ContentStore. */
import { join } from "node:path";
import type { Config } from "../config";
import type { ContentStore } from "./content-store";
import { contentStoreIn } from "./disk";
import { S3ContentStore } from "./s3";

export function createContentStore(config: Pick<Config, "contentStore" | "dataDir">): ContentStore {
  if (config.contentStore.kind === "s3") return new S3ContentStore(config.contentStore.s3, join(config.dataDir, "s3-spool"));
  return contentStoreIn(config.dataDir);
}
