// `npm start`: every service in one Node process on loopback ports, PGlite under ./.data and
// the in-process bus, unless DATABASE_URL / KAFKA_BROKERS point at real servers.
const { createInfrastructure, runService } = require('@billing/runtime');
const { createLogger } = require('@billing/service');
const { gatewayService } = require('@billing/gateway');
const { catalogService } = require('@billing/catalog');
const { checkoutService } = require('@billing/checkout');
const { billingService } = require('@billing/billing');
const { promotionsService } = require('@billing/promotions');
const { notificationsService } = require('@billing/notifications');

const services = [
  catalogService,
  checkoutService,
  billingService,
  promotionsService,
  notificationsService,
  gatewayService,
];
const host = process.env.HOST ?? '127.0.0.1';

async function main() {
  const logger = createLogger('billing');
  const infrastructure = await createInfrastructure({ clientId: 'billing-embedded' });
  const running = [];
  for (const service of services) {
    const port = Number(process.env[`${service.name.toUpperCase()}_PORT`] ?? service.defaultPort);
    running.push(
      await runService(service, infrastructure, { port, host, logger: logger.child({ service: service.name }) }),
    );
  }

  const gateway = running.find((s) => s.name === 'gateway');
  process.stdout.write(
    [
      '',
      `Billing platform is running (${infrastructure.mode}: ${infrastructure.database.kind}).`,
      `  Gateway:  ${gateway.url}`,
      ...running.filter((s) => s !== gateway).map((s) => `  ${s.name.padEnd(14)} ${s.url}`),
      '  Press Ctrl+C to stop.',
      '',
    ].join('\n') + '\n',
  );

  let stopping;
  const stop = (signal) => {
    stopping ??= (async () => {
      logger.info({ signal }, 'stopping');
      for (const service of running.reverse()) await service.shutdown();
      await infrastructure.close();
      process.exit(0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
