# One image for every agentmesh service; the compose file picks the service by command.
# Build stage: compile the TypeScript once (`npm run build` writes each workspace's dist/).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY services/gateway/package.json services/gateway/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/tool-host/package.json services/tool-host/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Run stage: compiled JavaScript run by node, production dependencies only. tsx stays (a
# dependency of @agentmesh/shared) for configs that name TypeScript modules, like the demo's
# tools: it is loaded only when such a module is imported.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY services/gateway/package.json services/gateway/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/tool-host/package.json services/tool-host/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/packages packages
COPY --from=build /app/services services
COPY --from=build /app/demo demo
COPY --from=build /app/mesh.yaml ./
USER node
CMD ["node", "--conditions=agentmesh-dist", "services/gateway/dist/main.js"]
