'use strict';
// Every service a paid checkout passes through, for the benchmarks that drive the platform as
// merchants and buyers do (checkout, growth): on loopback port 0, each in a schema of its own.
const { createInfrastructure, runService } = require('@billing/runtime');
const { catalogService } = require('@billing/catalog');
const { promotionsService } = require('@billing/promotions');
const { checkoutService } = require('@billing/checkout');
const { billingService } = require('@billing/billing');
const { notificationsService } = require('@billing/notifications');
const { createGatewayService } = require('@billing/gateway');
const {
  benchTopicPrefix,
  internalSecret,
  randomName: random,
  serviceLogger: logger,
  stopPlatform,
} = require('./platform');

/**
 * Starts catalog, promotions, checkout, billing, notifications and the gateway. `observe` sees
 * the infrastructure before any service uses it (to count statements). `outside` names services
 * to start elsewhere (`{ billing: ({ schema, config, internalSecret, topicPrefix }) => service }`,
 * a service being `{ url, shutdown() }`). The platform holds each
 * service's schema by name (`schema.billing`), the gateway and the admin token.
 */
async function startFullPlatform(benchmark, { observe = () => undefined, config: extra = {}, outside = {} } = {}) {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: benchTopicPrefix(),
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  };
  const infrastructure = await createInfrastructure({ clientId: `bench-${benchmark}`, dataDir: 'memory', env });
  const platform = { infrastructure, services: [], schemas: [], schema: {}, adminToken: random('adm') };
  observe(platform);
  // One config object, filled in as services start: checkout reads the others' addresses at first use.
  const config = {
    ADMIN_TOKEN: platform.adminToken,
    RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000000',
    // The webhook receiver is on 127.0.0.1; otherwise the product's defaults.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox',
    ...extra,
  };
  const start = async (definition) => {
    const schema = random(`bench_${definition.name}`);
    platform.schemas.push(schema);
    platform.schema[definition.name] = schema;
    // A service the benchmark runs in a process of its own: started there, with what it needs.
    const elsewhere = outside[definition.name];
    const service = elsewhere
      ? await elsewhere({ schema, config: { ...config }, internalSecret, topicPrefix: env.KAFKA_TOPIC_PREFIX })
      : await runService(definition, infrastructure, {
          port: 0,
          schema,
          config,
          internalSecret,
          logger: logger(definition.name),
        });
    platform.services.unshift(service); // stopped in reverse order: gateway first
    config[`${definition.name.toUpperCase()}_SERVICE_URL`] = service.url;
    return service;
  };
  try {
    for (const definition of [catalogService, promotionsService, checkoutService, billingService, notificationsService])
      await start(definition);
    platform.gateway = await start(createGatewayService());
    config.CHECKOUT_URL = `${platform.gateway.url}/checkout`;
  } catch (error) {
    await stopPlatform(platform, benchmark);
    throw error;
  }
  return platform;
}

module.exports = { startFullPlatform };
