# The cuda-gatekeeper GitHub App's own image.
# Build: docker build -t cuda-gatekeeper .   Run: docker run -p 3000:3000 --env-file .env cuda-gatekeeper
FROM node:24.22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY rules rules
COPY test/bench test/bench
COPY test/support test/support
COPY baseline.yaml ./
COPY examples examples
RUN npm run build:ts && npm prune --omit=dev

FROM node:24.22-bookworm-slim
# tini as PID 1: signals reach node (which drains on SIGTERM, see src/github/server.ts) and children are reaped.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json baseline.yaml app.yml ./
COPY examples examples
COPY rules rules
USER node
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
