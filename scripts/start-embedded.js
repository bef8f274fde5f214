// `npm start`: the gateway on PORT (default 8080) and every service in one Node process, on
// PGlite, which also carries the bus (or DATABASE_URL / KAFKA_BROKERS when set). Everything it keeps
// is under DATA_DIR (default ./.data): PGlite in DATA_DIR/pglite, the admin token and the demo
// organization beside it; DATA_DIR=memory keeps nothing on disk. The first start creates an
// admin token and a demo organization; later starts reuse them, and print them again only with
// `--show-secrets` (or SHOW_SECRETS=1). Services listen on 127.0.0.1 whatever HOST says (only
// the gateway takes HOST) and answer only calls signed with INTERNAL_SECRET, made on the first
// start and kept in DATA_DIR/internal-secret unless set. It says what it is doing (the build, the database, each service) and
// prints the banner last; logs are warnings and errors unless LOG_LEVEL is set, pretty on a
// terminal and JSON otherwise (LOG_FORMAT).
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

/** The gateway's address; the services are never reachable from another machine. */
const host = process.env.HOST ?? '127.0.0.1';
const SERVICE_HOST = '127.0.0.1';
/** Print the admin token and the demo keys even when they were made by an earlier start. */
const showSecrets = process.argv.includes('--show-secrets') || process.env.SHOW_SECRETS === '1';
/** `npm start` passes it: build the packages first (the @billing/* modules load from their dist). */
const buildFirst = process.argv.includes('--build');

/** A progress line for the person watching; logs are for machines and come as LOG_LEVEL says. */
const say = (text) => process.stdout.write(`${text}\n`);
const secondsSince = (started) => `${((Date.now() - started) / 1000).toFixed(1)} s`;

/** `turbo run build`, saying what it does: a first build of every package takes minutes. */
async function buildPackages() {
  say('Building the packages (turbo run build). The first build compiles every package and can take');
  say('a few minutes; later starts reuse its cache and take seconds.');
  const started = Date.now();
  const child = spawn('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const ticker = setInterval(() => say(`  still building (${Math.round((Date.now() - started) / 1000)} s)`), 15000);
  const code = await new Promise((done) => child.on('close', done));
  clearInterval(ticker);
  if (code !== 0) {
    process.stderr.write(output);
    throw new Error(`the build failed (turbo exited with ${code}); its output is above`);
  }
  say(`Built in ${secondsSince(started)}${output.includes('FULL TURBO') ? ' (all from the cache)' : ''}.`);
}

/** Where this run keeps its data: absolute paths, or null for each when DATA_DIR=memory. */
function dataPaths(setting = process.env.DATA_DIR) {
  if (setting === 'memory') {
    return { root: null, pglite: null, adminToken: null, internalSecret: null, demoOrganization: null };
  }
  const root = resolve(setting || '.data');
  return {
    root,
    pglite: join(root, 'pglite'),
    adminToken: join(root, 'admin-token'),
    internalSecret: join(root, 'internal-secret'),
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

/**
 * INTERNAL_SECRET from the environment, else the one kept in DATA_DIR (made on first start).
 * Kept, not made per start: portal links are derived from it, and a new one would end every
 * open link at each restart.
 */
function internalSecret() {
  if (process.env.INTERNAL_SECRET) return process.env.INTERNAL_SECRET;
  const made = randomBytes(32).toString('base64url');
  if (!paths.internalSecret) return made;
  if (existsSync(paths.internalSecret)) return readFileSync(paths.internalSecret, 'utf8').trim();
  writeFileSync(paths.internalSecret, `${made}\n`, { mode: 0o600 });
  return made;
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

/** A shell word: as it is when that is safe, else in single quotes. */
const shellQuote = (value) => (/^[\w.:/@+-]+$/.test(value) ? value : `'${String(value).replace(/'/g, `'\\''`)}'`);

/**
 * `export` lines to paste into a shell (the README's commands use these names). Secrets not
 * shown are read from their files, so the lines work on every start without printing them.
 */
function exportLines(gatewayUrl, admin, demo) {
  const shown = (created) => created || showSecrets;
  const fromDemoFile = (field) =>
    `$(node -p 'require(process.argv[1]).sandbox.${field}' ${shellQuote(paths.demoOrganization)})`;
  const lines = [`export BILLING_URL=${gatewayUrl}`, `export ORG_ID=${demo.id}`];
  if (shown(admin.created)) lines.push(`export ADMIN_TOKEN=${shellQuote(admin.token)}`);
  else if (!process.env.ADMIN_TOKEN) lines.push(`export ADMIN_TOKEN=$(cat ${shellQuote(paths.adminToken)})`);
  const keys = shown(demo.created)
    ? { secret: demo.sandbox.secret_key, publishable: demo.sandbox.publishable_key }
    : { secret: fromDemoFile('secret_key'), publishable: fromDemoFile('publishable_key') };
  lines.push(`export SANDBOX_SECRET_KEY=${keys.secret}`, `export SANDBOX_PUBLISHABLE_KEY=${keys.publishable}`);
  return lines.map((line) => `    ${line}`);
}

/** Everything a person needs, printed last so that it is the last thing on the screen. */
function banner({ infrastructure, gateway, services, admin, demo }) {
  const line = (label, value) => `  ${`${label}:`.padEnd(22)}${value}`;
  const ports = services.map((s) => `${s.name} :${new URL(s.url).port}`).join(', ');
  return [
    '',
    `Billing platform is running (${infrastructure.mode}: ${infrastructure.database.kind}).`,
    '',
    `  Gateway:              ${gateway.url}   (API: ${gateway.url}/v1, OpenAPI: ${gateway.url}/v1/openapi.json)`,
    line('Dashboard', `${gateway.url}/dashboard   (sign in as the operator with the admin token)`),
    `  Demo organization:    ${demo.id}`,
    ...secretLines(admin, demo),
    line('Internal services', `${ports} on ${SERVICE_HOST}, signed calls only`),
    ...dataLines(process.env),
    '',
    '  To use these in a shell, paste:',
    ...exportLines(gateway.url, admin, demo),
    '',
    '  Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** What the database and the bus are, said before opening them (a first PGlite start creates it). */
function describeStorage(env) {
  if (env.DATABASE_URL) return `PostgreSQL at DATABASE_URL${env.KAFKA_BROKERS ? ', Kafka at KAFKA_BROKERS' : ''}`;
  const bus = env.KAFKA_BROKERS ? ', Kafka at KAFKA_BROKERS' : ', the bus in it';
  if (!paths.pglite) return `embedded PostgreSQL (PGlite) in memory${bus}`;
  const fresh = !existsSync(join(paths.pglite, 'PG_VERSION'));
  return `embedded PostgreSQL (PGlite) at ${paths.pglite}${bus}${fresh ? ' (first start: creating it)' : ''}`;
}

async function main() {
  if (buildFirst) await buildPackages();
  // Loaded after the build: they are its output.
  const { createInfrastructure, runService } = require('@billing/runtime');
  const { createLogger } = require('@billing/service');
  const { createGatewayService } = require('@billing/gateway');
  // Checkout calls catalog and promotions, so they start first.
  const services = [
    require('@billing/catalog').catalogService,
    require('@billing/promotions').promotionsService,
    require('@billing/checkout').checkoutService,
    require('@billing/billing').billingService,
    require('@billing/notifications').notificationsService,
  ];

  if (paths.root) mkdirSync(paths.root, { recursive: true });
  // Warnings and errors only unless LOG_LEVEL says otherwise (`info` logs every request): the
  // progress lines and the banner are what a person starting it reads.
  const logger = createLogger('billing', { level: process.env.LOG_LEVEL ?? 'warn' });
  say(`Opening ${describeStorage(process.env)}.`);
  const infrastructure = await createInfrastructure({
    clientId: 'billing-embedded',
    dataDir: paths.pglite ?? 'memory',
  });
  const running = [];
  const admin = adminToken();
  const config = {
    ...process.env,
    ADMIN_TOKEN: admin.token,
    // Every service runs in this process, so one secret, kept in DATA_DIR, is shared by all of them.
    INTERNAL_SECRET: internalSecret(),
  };
  // The embedded default is a developer's machine: its Sandbox webhooks may reach localhost and
  // private networks. On real servers (DATABASE_URL or KAFKA_BROKERS) only when the operator
  // says so; `none` turns it off here too (docs/webhooks.md, "Where webhooks may go").
  if (!process.env.DATABASE_URL && !process.env.KAFKA_BROKERS) config.WEBHOOK_ALLOW_PRIVATE_TARGETS ??= 'sandbox';
  say('Starting the services (each creates its tables on the first start):');
  const start = async (definition, port, serviceHost) => {
    const started = Date.now();
    const service = await runService(definition, infrastructure, {
      port,
      host: serviceHost,
      logger: logger.child({ service: definition.name }),
      config,
    });
    say(`  ${definition.name.padEnd(14)}${service.url}  (${secondsSince(started)})`);
    running.push(service);
    return service;
  };
  const internal = [];
  for (const definition of services) {
    const service = await start(
      definition,
      Number(process.env[`${definition.name.toUpperCase()}_PORT`] ?? 0),
      SERVICE_HOST,
    );
    internal.push({ name: definition.name, url: service.url });
    config[`${definition.name.toUpperCase()}_SERVICE_URL`] = service.url;
  }
  const gateway = await start(createGatewayService(), Number(process.env.PORT ?? 8080), host);
  // Hosted pages are served through the gateway; checkout reads this when it builds page URLs.
  config.CHECKOUT_URL ??= `${gateway.url}/checkout`;
  config.PAYMENT_LINK_URL ??= `${gateway.url}/pay`;
  config.PORTAL_URL ??= `${gateway.url}/portal`;
  if (!paths.demoOrganization || !existsSync(paths.demoOrganization)) say('Creating the demo organization.');
  const demo = await demoOrganization(gateway.url, config.ADMIN_TOKEN);

  process.stdout.write(`${banner({ infrastructure, gateway, services: internal, admin, demo })}\n`);

  let stopping;
  const stop = (signal) => {
    stopping ??= (async () => {
      say(`\n${signal}: stopping (draining requests, then closing the database).`);
      for (const service of running.reverse()) await service.shutdown();
      await infrastructure.close();
      say('Stopped.');
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
