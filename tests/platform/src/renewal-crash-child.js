// Billing in its own process on an existing schema, for the renewal crash test (issue 13,
// part 9). With RENEWAL_KILL_AFTER_CHARGE=1 it kills itself with SIGKILL as soon as checkout
// has answered its first charge call (one charge, or a batch of them), before billing records
// the answer: the worst moment, when cards are charged and billing does not know it. Prints
// `listening <url>` when it serves, and `charged <path> <keys> <statuses>` just before it dies.
const { createInfrastructure, runService, InternalClient } = require('@billing/runtime');
const { billingService } = require('@billing/billing');
const { createLogger } = require('@billing/service');

const env = process.env;

if (env.RENEWAL_KILL_AFTER_CHARGE === '1') {
  const post = InternalClient.prototype.post;
  InternalClient.prototype.post = async function (path, body, caller) {
    const answer = await post.call(this, path, body, caller);
    if (path === '/internal/charges' || path === '/internal/charges/batch') {
      const batch = path.endsWith('/batch');
      const keys = batch ? body.charges.map((c) => c.idempotency_key) : [body.idempotency_key];
      const statuses = batch ? answer.body.results.map((r) => r.status) : [answer.body.status];
      process.stdout.write(`charged ${path} ${keys.join(',')} ${statuses.join(',')}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
    return answer;
  };
}

async function main() {
  const infrastructure = await createInfrastructure({ clientId: 'billing-crash-child', dataDir: 'memory', env });
  const service = await runService(billingService, infrastructure, {
    port: 0,
    schema: env.BILLING_SCHEMA,
    internalSecret: env.INTERNAL_SECRET,
    config: { CHECKOUT_SERVICE_URL: env.CHECKOUT_SERVICE_URL, BILLING_TRIAL_SWEEP_INTERVAL_MS: '50' },
    logger: createLogger('billing', { level: env.LOG_LEVEL ?? 'silent', destination: process.stderr }),
  });
  process.stdout.write(`listening ${service.url}\n`);
  process.once('SIGTERM', async () => {
    await service.shutdown();
    await infrastructure.close();
    process.exit(0);
  });
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
