// `npm start`: the gateway on PORT (default 8080) and every service in one Node process, on
// PGlite, which also carries the bus (or DATABASE_URL / KAFKA_BROKERS when set). Everything it keeps
// is under DATA_DIR (default ./.data): PGlite in DATA_DIR/pglite, the admin token and the demo
// organization beside it; DATA_DIR=memory keeps nothing on disk. The first start creates an
// admin token and a demo organization; later starts reuse them, and print them again only with
// `--show-secrets` (or SHOW_SECRETS=1). Services listen on 127.0.0.1 whatever HOST says (only
// the gateway takes HOST) and answer only calls signed with INTERNAL_SECRET, made for this
// process unless set.
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
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
/** The gateway's address; the services are never reachable from another machine. */
const host = process.env.HOST ?? '127.0.0.1';
const SERVICE_HOST = '127.0.0.1';
/** Print the admin token and the demo keys even when they were made by an earlier start. */
const showSecrets = process.argv.includes('--show-secrets') || process.env.SHOW_SECRETS === '1';

/** Where this run keeps its data: absolute paths, or null for each when DATA_DIR=memory. */
function dataPaths(setting = process.env.DATA_DIR) {
  if (setting === 'memory') return { root: null, pglite: null, adminToken: null, demoOrganization: null };
  const root = resolve(setting || '.data');
  return {
    root,
    pglite: join(root, 'pglite'),
    adminToken: join(root, 'admin-token'),
    demoOrganization: join(root, 'demo-organization.json'),
  };
}
const paths = dataPaths();

/**
 * ADMIN_TOKEN from the environment, else the one kept in DATA_DIR (made on first start);
 * `created` when this start made it.
 */
function adminToken() {
  if (process.env.ADMIN_TOKEN) return { token: process.env.ADMIN_TOKEN, created: false };
  const made = `adm_${randomBytes(24).toString('base64url')}`;
  if (!paths.adminToken) return { token: made, created: true };
  if (existsSync(paths.adminToken)) return { token: readFileSync(paths.adminToken, 'utf8').trim(), created: false };
  writeFileSync(paths.adminToken, `${made}\n`, { mode: 0o600 });
  return { token: made, created: true };
}

/** The demo organization's Sandbox keys, kept in DATA_DIR (`created` when this start made it). */
async function demoOrganization(gatewayUrl, token) {
  const file = paths.demoOrganization;
  if (file && existsSync(file)) return { ...JSON.parse(readFileSync(file, 'utf8')), created: false };
  const response = await fetch(`${gatewayUrl}/admin/v1/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Demo' }),
  });
  if (response.status !== 201) throw new Error(`creating the demo organization failed: ${response.status}`);
  const created = await response.json();
  const demo = { id: created.id, name: created.name, sandbox: created.api_keys.sandbox };
  if (file) writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return { ...demo, created: true };
}

/**
 * The banner's secret lines: the values when this start made them or `--show-secrets` asks,
 * otherwise where they are kept. Logs never carry them.
 */
function secretLines(admin, demo) {
  const line = (label, value) => `  ${`${label}:`.padEnd(22)}${value}`;
  const again = 'npm start -- --show-secrets prints it';
  const kept = process.env.ADMIN_TOKEN ? 'it is the ADMIN_TOKEN you set' : `${paths.adminToken} holds it`;
  const adminLine =
    admin.created || showSecrets
      ? line('Admin token', admin.token)
      : line('Admin token', `not shown: ${kept} (${again})`);
  if (!demo.created && !showSecrets) {
    return [
      adminLine,
      line('Sandbox keys', `not shown: ${paths.demoOrganization} holds them (npm start -- --show-secrets prints them)`),
    ];
  }
  return [
    adminLine,
    line('Sandbox secret key', demo.sandbox.secret_key),
    line('Sandbox publishable', demo.sandbox.publishable_key),
  ];
}

/** The banner's lines about where this run keeps things: the exact paths, or why there is none. */
function dataLines(env) {
  const line = (label, value) => `  ${`${label}:`.padEnd(22)}${value}`;
  return [
    line('Data directory', paths.root ?? 'none (DATA_DIR=memory: nothing is written to disk)'),
    env.DATABASE_URL
      ? line('Database', 'PostgreSQL at DATABASE_URL')
      : line('PGlite data', paths.pglite ?? 'in memory, lost on exit'),
    line(
      'Admin token file',
      env.ADMIN_TOKEN ? 'none (ADMIN_TOKEN is set)' : (paths.adminToken ?? 'none (a new token every start)'),
    ),
    line('Demo org file', paths.demoOrganization ?? 'none (a new demo organization every start)'),
  ];
}

async function main() {
  if (paths.root) mkdirSync(paths.root, { recursive: true });
  const logger = createLogger('billing');
  const infrastructure = await createInfrastructure({
    clientId: 'billing-embedded',
    dataDir: paths.pglite ?? 'memory',
  });
  const running = [];
  const admin = adminToken();
  const config = {
    ...process.env,
    ADMIN_TOKEN: admin.token,
    // Every service runs in this process, so a secret made now is shared by all of them.
    INTERNAL_SECRET: process.env.INTERNAL_SECRET || randomBytes(32).toString('base64url'),
  };
  // The embedded default is a developer's machine: its Sandbox webhooks may reach localhost and
  // private networks. On real servers (DATABASE_URL or KAFKA_BROKERS) only when the operator
  // says so; `none` turns it off here too (docs/webhooks.md, "Where webhooks may go").
  if (!process.env.DATABASE_URL && !process.env.KAFKA_BROKERS) config.WEBHOOK_ALLOW_PRIVATE_TARGETS ??= 'sandbox';
  for (const service of services) {
    const port = Number(process.env[`${service.name.toUpperCase()}_PORT`] ?? 0);
    const started = await runService(service, infrastructure, {
      port,
      host: SERVICE_HOST,
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
  config.PORTAL_URL ??= `${gateway.url}/portal`;
  const demo = await demoOrganization(gateway.url, config.ADMIN_TOKEN);

  process.stdout.write(
    [
      '',
      `Billing platform is running (${infrastructure.mode}: ${infrastructure.database.kind}).`,
      `  Gateway:              ${gateway.url}   (API: ${gateway.url}/v1, OpenAPI: ${gateway.url}/v1/openapi.json)`,
      `  Demo organization:    ${demo.id}`,
      ...secretLines(admin, demo),
      ...dataLines(process.env),
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
