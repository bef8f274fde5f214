// Checks docker-compose.yml against the code: `node scripts/check-compose.js [file]`.
// 1. The compose tool (`docker compose`, else Debian's `docker-compose`) validates and resolves
//    the file with `config`; no engine is needed.
// 2. On the resolved file: every service under services/ has one container built from the
//    Dockerfile, its PORT is the service's defaultPort, every *_SERVICE_URL names a container at
//    that container's port, every variable given to a service is read somewhere in the code,
//    every container has a health check, start order waits on health, and only the gateway
//    publishes a port (an optional profile's tool may too). Exits 1 and lists the problems otherwise.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const yaml = require('js-yaml');

const root = join(__dirname, '..');
/** What `config` needs set to resolve the file; placeholders, never used to run anything. */
const REQUIRED_SETTINGS = { ADMIN_TOKEN: 'compose-check', INTERNAL_SECRET: 'compose-check-secret' };

/** The compose command: the docker CLI plugin when present, else the docker-compose program. */
function composeTool() {
  const works = (command, args) => spawnSync(command, args, { stdio: 'ignore', timeout: 30000 }).status === 0;
  if (works('docker', ['compose', 'version'])) return ['docker', ['compose']];
  if (works('docker-compose', ['version'])) return ['docker-compose', []];
  return null;
}

/** The file as the compose tool resolves it (anchors merged, variables substituted). */
function resolvedCompose(file, tool) {
  const [command, prefix] = tool;
  const result = spawnSync(command, [...prefix, '-f', file, 'config'], {
    env: { ...process.env, ...REQUIRED_SETTINGS },
    encoding: 'utf8',
    timeout: 60000,
  });
  if (result.status !== 0)
    throw new Error(`${command} ${[...prefix, 'config'].join(' ')} refused ${file}:\n${result.stderr}`);
  return yaml.safeLoad(result.stdout);
}

/** Non-test TypeScript sources of libs/ and services/, and the scripts: where settings are read. */
function sourceText() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) files.push(path);
    }
  };
  for (const group of ['libs', 'services']) {
    for (const pkg of readdirSync(join(root, group)))
      if (existsSync(join(root, group, pkg, 'src'))) walk(join(root, group, pkg, 'src'));
  }
  return files.map((file) => readFileSync(file, 'utf8')).join('\n');
}

const serviceDirs = () =>
  readdirSync(join(root, 'services')).filter((name) => existsSync(join(root, 'services', name, 'src', 'main.ts')));
const defaultPort = (name) =>
  Number(/defaultPort: (\d+)/.exec(readFileSync(join(root, 'services', name, 'src', 'service.ts'), 'utf8'))?.[1]);

/** The problems of a resolved compose document; empty when it matches the code. */
function problemsOf(compose) {
  const problems = [];
  const containers = compose.services ?? {};
  const built = Object.entries(containers).filter(([, c]) => c.build?.args?.SERVICE);
  const code = sourceText();
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  if (!dockerfile.includes('services/${SERVICE}/dist/main.js'))
    problems.push('Dockerfile: does not run services/${SERVICE}/dist/main.js');

  for (const name of serviceDirs()) {
    const mine = built.filter(([, c]) => c.build.args.SERVICE === name);
    if (mine.length !== 1) problems.push(`services/${name}: ${mine.length} containers build it (one expected)`);
  }
  const portOf = new Map();
  for (const [container, c] of built) {
    const service = c.build.args.SERVICE;
    if (!existsSync(join(root, 'services', service, 'src', 'main.ts'))) {
      problems.push(`${container}: builds SERVICE=${service}, which is not a service under services/`);
      continue;
    }
    if (container !== service) problems.push(`${container}: builds ${service}; name the container after it`);
    const port = Number(c.environment?.PORT);
    if (port !== defaultPort(service))
      problems.push(
        `${container}: PORT ${c.environment?.PORT} is not ${service}'s defaultPort ${defaultPort(service)}`,
      );
    portOf.set(container, port);
  }
  for (const [container, c] of built) {
    for (const [variable, value] of Object.entries(c.environment ?? {})) {
      if (!new RegExp(`\\b${variable}\\b`).test(code))
        problems.push(`${container}: ${variable} is read nowhere in libs/ or services/`);
      const url = /_SERVICE_URL$/.test(variable) ? /^http:\/\/([^:/]+):(\d+)$/.exec(String(value)) : null;
      if (/_SERVICE_URL$/.test(variable)) {
        const target = variable.replace(/_SERVICE_URL$/, '').toLowerCase();
        if (!url || url[1] !== target || Number(url[2]) !== portOf.get(target)) {
          problems.push(
            `${container}: ${variable}=${value} is not the ${target} container at its PORT ${portOf.get(target)}`,
          );
        }
      }
    }
  }
  for (const [container, c] of Object.entries(containers)) {
    if (!c.healthcheck?.test) problems.push(`${container}: no health check`);
    for (const [dependency, rule] of Object.entries(c.depends_on ?? {})) {
      if (!containers[dependency]) problems.push(`${container}: depends on ${dependency}, which is not a service`);
      else if (rule.condition !== 'service_healthy')
        problems.push(`${container}: starts before ${dependency} is healthy`);
    }
    const published = (c.ports ?? []).length > 0;
    // A profile's container is a tool for developers (the EventStoreDB for its suite), not the topology.
    if (!c.profiles && published !== (container === 'gateway'))
      problems.push(`${container}: ${published ? 'publishes a port' : 'publishes no port'}`);
  }
  const gatewayPorts = (containers.gateway?.ports ?? []).map((p) =>
    Number(typeof p === 'object' ? p.target : String(p).split(':').pop()),
  );
  if (containers.gateway && !gatewayPorts.includes(portOf.get('gateway')))
    problems.push(`gateway: its PORT ${portOf.get('gateway')} is not published`);
  return problems;
}

/** Validates and checks a compose file; `tool` null means no compose tool is installed. */
function checkCompose(file = join(root, 'docker-compose.yml'), tool = composeTool()) {
  if (!tool)
    throw new Error(
      "no compose tool: install the docker compose plugin or Debian's docker-compose (apt-get install docker-compose)",
    );
  return problemsOf(resolvedCompose(file, tool));
}

module.exports = { checkCompose, composeTool };

if (require.main === module) {
  const file = process.argv[2] ?? join(root, 'docker-compose.yml');
  try {
    const problems = checkCompose(file);
    if (problems.length) {
      process.stderr.write(
        `${relative(process.cwd(), file)}: ${problems.length} problem(s):\n  ${problems.join('\n  ')}\n`,
      );
      process.exit(1);
    }
    process.stdout.write(
      `${relative(process.cwd(), file) || file}: valid, and every service, port and variable it names exists in the code\n`,
    );
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
