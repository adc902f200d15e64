# One image for every agentmesh service; the compose file picks the service by command.
# Build stage: compile the TypeScript once (`npm run build` writes each workspace's dist/), and
# build the console the gateway serves at /ui (packages/console/dist, copied with packages/).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/console/package.json packages/console/
COPY services/gateway/package.json services/gateway/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/tool-host/package.json services/tool-host/
COPY test/support/package.json test/support/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm run build:demo && npm run build:console

# Run stage: compiled JavaScript run by node, production dependencies only: no TypeScript compiler,
# no test tools, and no TypeScript runtime (tsx, optional for @agentmesh/shared, is omitted). The
# demo's tools and offline model are compiled too; a config of yours names JavaScript modules.
FROM node:20-bookworm-slim
# tini is PID 1: it forwards SIGTERM/SIGINT to node (whose handlers drain: docs/guides/getting-started.md) and reaps
# zombies. Node is not written to be PID 1: it reaps no orphans (the tool-host's stdio MCP servers
# spawn processes), and as PID 1 a signal it has no handler for is ignored instead of ending it.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# HOST: every service listens on all interfaces inside its container (the gateway and tool-host
# then need their secrets, docs/reference/rest-api.md; a runner serves only its metrics there).
ENV NODE_ENV=production HOST=0.0.0.0
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY packages/console/package.json packages/console/
COPY services/gateway/package.json services/gateway/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/tool-host/package.json services/tool-host/
COPY test/support/package.json test/support/
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/packages packages
COPY --from=build /app/services services
COPY --from=build /app/demo/docs demo/docs
COPY --from=build /app/dist/demo demo
COPY --from=build /app/dist/scripts scripts
COPY --from=build /app/mesh.yaml ./
# A non-root user (the node image's own): the services write nothing under /app.
USER node
ENTRYPOINT ["/usr/bin/tini", "--"]
# node is tini's child, never npm: npm does not pass signals on, so a drain would never start.
CMD ["node", "--conditions=agentmesh-dist", "services/gateway/dist/main.js"]
