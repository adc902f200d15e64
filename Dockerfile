# One image for every agentmesh service; the compose file picks the service by command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY package.json package-lock.json ./
COPY packages/shared/package.json packages/shared/
COPY services/gateway/package.json services/gateway/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/tool-host/package.json services/tool-host/
# tsx runs the TypeScript sources directly, so dev dependencies stay (no build step).
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
USER node
CMD ["npm", "run", "gateway"]
