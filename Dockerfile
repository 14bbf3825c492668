# syntax=docker/dockerfile:1
# Vigil's one image: `vigil serve`, the upload and prepare containers of every
# scanner Job, the OPENVAS and NESSUS drivers (`vigil scanner ...`), and the
# login step of authenticated ZAP scans (`vigil login-replay`), which drives
# Debian's Chromium through playwright-core.
# Build it with `make image`; the name and tag come from the Makefile, which
# takes them from src/domain/scanners/images.ts and package.json.
ARG NODE_IMAGE=node:20-bookworm-slim

# better-sqlite3 has no prebuilt binary that works here, so it compiles
# from source: python3, make and g++ stay in the build stages and never
# reach the runtime image.
FROM ${NODE_IMAGE} AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

# Production dependencies only: what the runtime image ships.
FROM toolchain AS deps
RUN npm ci --omit=dev --no-audit --no-fund

# The TypeScript compiler and esbuild are dev dependencies: compile in a stage
# of its own (BuildKit runs it beside deps). npm run build is tsc, then esbuild
# bundling src/runtime/kubernetes/client-node.ts over tsc's output, so `vigil
# serve` loads the few parts of @kubernetes/client-node it uses.
FROM toolchain AS build
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle-client-node.ts ./scripts/
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
# Chromium replays login recordings (the embedded runtime in `serve`, and the
# login step of scanner Jobs); fonts so that pages lay out as they do for people.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
# V8's young generation is capped at two 4 MiB semi-spaces (16 MiB each by
# default): the controller's short-lived garbage (API requests, watch events,
# uploads) is collected sooner, which kept its peak with 1,000 scans under
# 200 MB (bench/operator.ts, README "Performance aims"). A NODE_OPTIONS set for
# the pod (the chart's extraEnv) replaces this one: keep the flag in it.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=4 \
    VIGIL_DATA_DIR=/var/lib/vigil \
    VIGIL_HOST=0.0.0.0 \
    VIGIL_CHROMIUM=/usr/bin/chromium
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The data directory is the only place Vigil writes besides /tmp, so the root
# filesystem can be mounted read-only; uid 65532 is the uid scanner Jobs use.
RUN chmod 0755 dist/src/cli/main.js \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/vigil \
 && mkdir -p /var/lib/vigil \
 && chown 65532:65532 /var/lib/vigil
USER 65532:65532
VOLUME ["/var/lib/vigil"]
EXPOSE 8080
ENTRYPOINT ["vigil"]
CMD ["serve"]
