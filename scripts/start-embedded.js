// `npm start`: the gateway on PORT (default 8080) and every service in one Node process, on
// PGlite under ./.data and the in-process bus (or DATABASE_URL / KAFKA_BROKERS when set).
// The first start creates an admin token and a demo organization; later starts reuse them.
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { createInfrastructure, runService } = require('@billing/runtime');
const { createLogger } = require('@billing/service');
const { createGatewayService } = require('@billing/gateway');
const { catalogService } = require('@billing/catalog');
const { checkoutService } = require('@billing/checkout');
const { billingService } = require('@billing/billing');
const { promotionsService } = require('@billing/promotions');
const { notificationsService } = require('@billing/notifications');

// Checkout calls catalog and promotions, so they start first.
const services = [catalogService, promotionsService, checkoutService, billingService, notificationsService];
const host = process.env.HOST ?? '127.0.0.1';
const dataDir = join(process.cwd(), '.data');

/** ADMIN_TOKEN from the environment, else the one kept in .data (made on first start). */
function adminToken() {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = join(dataDir, 'admin-token');
  if (!existsSync(file)) writeFileSync(file, `adm_${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The demo organization's Sandbox keys, kept in .data so that every start can print them. */
async function demoOrganization(gatewayUrl, token) {
  const file = join(dataDir, 'demo-organization.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const response = await fetch(`${gatewayUrl}/admin/v1/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Demo' }),
  });
  if (response.status !== 201) throw new Error(`creating the demo organization failed: ${response.status}`);
  const created = await response.json();
  const demo = { id: created.id, name: created.name, sandbox: created.api_keys.sandbox };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

async function main() {
  mkdirSync(dataDir, { recursive: true });
  const logger = createLogger('billing');
  const infrastructure = await createInfrastructure({ clientId: 'billing-embedded', dataDir: join(dataDir, 'pglite') });
  const running = [];
  const config = { ...process.env, ADMIN_TOKEN: adminToken() };
  for (const service of services) {
    const port = Number(process.env[`${service.name.toUpperCase()}_PORT`] ?? 0);
    const started = await runService(service, infrastructure, {
      port,
      host,
      logger: logger.child({ service: service.name }),
      config,
    });
    running.push(started);
    config[`${service.name.toUpperCase()}_SERVICE_URL`] = started.url;
  }
  const gateway = await runService(createGatewayService(), infrastructure, {
    port: Number(process.env.PORT ?? 8080),
    host,
    logger: logger.child({ service: 'gateway' }),
    config,
  });
  running.push(gateway);
  // Hosted pages are served through the gateway; checkout reads this when it builds page URLs.
  config.CHECKOUT_URL ??= `${gateway.url}/checkout`;
  config.PAYMENT_LINK_URL ??= `${gateway.url}/pay`;
  const demo = await demoOrganization(gateway.url, config.ADMIN_TOKEN);

  process.stdout.write(
    [
      '',
      `Billing platform is running (${infrastructure.mode}: ${infrastructure.database.kind}, data in ${dataDir}).`,
      `  Gateway:              ${gateway.url}   (API: ${gateway.url}/v1, OpenAPI: ${gateway.url}/v1/openapi.json)`,
      `  Admin token:          ${config.ADMIN_TOKEN}`,
      `  Demo organization:    ${demo.id}`,
      `  Sandbox secret key:   ${demo.sandbox.secret_key}`,
      `  Sandbox publishable:  ${demo.sandbox.publishable_key}`,
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
