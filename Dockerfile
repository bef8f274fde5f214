# One image recipe for every service: docker build --build-arg SERVICE=catalog .
FROM node:20-bookworm-slim AS build
ARG SERVICE
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npx turbo run build --filter=@billing/${SERVICE}

FROM node:20-bookworm-slim
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE}
WORKDIR /app
COPY --from=build /app /app
USER node
CMD ["sh", "-c", "exec node services/${SERVICE}/dist/main.js"]
