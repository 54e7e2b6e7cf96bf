# Kiln: multi-stage image on the official Bun image (Debian-based: the embedded PostgreSQL binaries need glibc).
# Build: docker build -t kiln .
# Run:   docker run -p 3000:3000 -v kiln-data:/data -e BOOTSTRAP_API_KEY=kiln_... kiln
# BASE_IMAGE must be a glibc image with `bun` on the PATH and a `bun` user; the Docker test
# (bun run test:docker) builds a stand-in from Debian's packages where Docker Hub cannot be reached.
ARG BASE_IMAGE=oven/bun:1.4.5

FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY package.json bun.lock ./
COPY patches ./patches
RUN bun install --frozen-lockfile --production

FROM ${BASE_IMAGE} AS runtime
WORKDIR /app
# MIMALLOC_PURGE_DELAY: Bun's allocator keeps freed memory a second before returning it (docs/configuration.md)
ENV NODE_ENV=production \
    MIMALLOC_PURGE_DELAY=1000 \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY src ./src
COPY drizzle ./drizzle
# The image's unprivileged `bun` user owns the data volume; the embedded PostgreSQL runs as that user too.
# `kiln` (the CLI) is on the PATH: docker exec <container> kiln usage
RUN mkdir -p /data && chown bun:bun /data && ln -s /app/src/cli/index.ts /usr/local/bin/kiln
USER bun
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["bun", "src/index.ts"]
