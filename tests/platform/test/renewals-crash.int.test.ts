import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { billingService } from '@billing/billing';
import { checkoutService } from '@billing/checkout';
import {
  type Infrastructure,
  type ServiceUnderTest,
  startServiceForTest,
  testInfrastructure,
  testInternalSecret,
} from '@billing/runtime';
import { callService, caller, describeWithServer, eventually, newOrg, uniqueName } from '@billing/testing';
import {
  expectRenewedOncePerPeriod,
  ledgerChargesByInvoice,
  monthlyPlan,
  publishPaidCheckouts,
  renewalFacts,
} from '../src/renewal-fixtures';

/**
 * Issue 13, part 9: billing killed with SIGKILL between a renewal's charge and its record (the
 * card is charged, billing does not know it), then started again on the same data: first
 * after the charge of a batch of renewals, then after a single renewal's charge. Each restart
 * charges again under the same keys (`<invoice>:<attempt>`), gets the first answers back, and
 * records them: every invoice is paid once and checkout's ledger holds one charge for it.
 */
const COUNT = 3;

jest.setTimeout(180_000);

const script = join(__dirname, '..', 'src', 'renewal-crash-child.js');

/** Billing from dist in a child process; resolves with its URL once it serves. */
function startBilling(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /listening (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    void exited.then(({ code, signal }) =>
      reject(new Error(`billing exited (${code ?? signal}) before it served:\n${output}`)),
    );
  });
  return { child, url, exited, output: () => output };
}

describeWithServer('DATABASE_URL', 'a renewal when billing is killed between the charge and its record', () => {
  const schema = uniqueName('billing_crash');
  let infrastructure: Infrastructure;
  let checkout: ServiceUnderTest;
  let running: ChildProcess | undefined;

  beforeAll(async () => {
    infrastructure = await testInfrastructure('billing-crash');
    checkout = await startServiceForTest(checkoutService, { infrastructure });
  });
  afterAll(async () => {
    if (running && running.exitCode === null && running.signalCode === null) {
      const gone = new Promise((resolve) => running!.once('exit', resolve));
      running.kill('SIGTERM');
      await gone;
    }
    await checkout?.stop();
    await infrastructure?.database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await infrastructure?.close();
  });

  it('charges once: each restarted engine finds the charges under their keys and records them', async () => {
    const org = newOrg();
    // Subscriptions on a test clock, provisioned by billing in this process, which then stops
    // (its schema stays) and hands the data to the engine in the child.
    const provisioner = await startServiceForTest(billingService, { infrastructure, schema });
    const clock = await callService(provisioner.service.url, 'POST', '/v1/test_clocks', caller(org), {
      frozen_time: '2026-01-31T10:00:00Z',
    });
    expect(clock.status).toBe(201);
    await publishPaidCheckouts(infrastructure.bus, org, monthlyPlan(), COUNT, clock.body.id);
    await eventually(async () =>
      expect((await renewalFacts(infrastructure.database, schema, org)).subscriptions).toHaveLength(COUNT),
    );
    await provisioner.service.shutdown();

    // The child's bus lives in PostgreSQL (no KAFKA_BROKERS): a restart after SIGKILL would
    // otherwise wait for Kafka to drop the dead member from billing's consumer group, and
    // nothing here goes through the bus; the renewals are the sweep's and the clock's.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      DATABASE_URL: process.env.DATABASE_URL,
      KAFKA_TOPIC_PREFIX: `${uniqueName('renewal-crash')}.`,
      DATABASE_POOL_SIZE: '4',
      INTERNAL_SECRET: testInternalSecret(),
      BILLING_SCHEMA: schema,
      CHECKOUT_SERVICE_URL: checkout.service.url,
      LOG_LEVEL: process.env.LOG_LEVEL,
    };
    const checkoutSchema = checkout.service.context.store.tables.schema;

    /** Billing that SIGKILLs itself after its next charge call; `started` runs once it serves. */
    async function killedAfterCharge(started: (url: string) => Promise<unknown> = async () => undefined) {
      const doomed = startBilling({ ...env, RENEWAL_KILL_AFTER_CHARGE: '1' });
      running = doomed.child;
      await started(await doomed.url);
      expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const [, path, keys, statuses] = /charged (\S+) (\S+) (\S+)/.exec(doomed.output())!;
      return { path, keys: keys!.split(','), statuses: statuses!.split(',') };
    }

    /** The cards of `keys` charged once each, and nothing recorded: every renewal invoice still open, no attempt. */
    async function expectChargedNotRecorded(keys: string[]) {
      const invoiceIds = keys.map((key) => key.split(':')[0]!);
      const facts = await renewalFacts(infrastructure.database, schema, org);
      expect(facts.renewalInvoices.map((i) => i.id)).toEqual(expect.arrayContaining(invoiceIds));
      for (const invoice of facts.renewalInvoices) expect(invoice).toMatchObject({ status: 'open', attempt_count: 0 });
      expect(facts.renewed).toEqual([]);
      const ledger = await ledgerChargesByInvoice(infrastructure.database, checkoutSchema, invoiceIds);
      for (const id of invoiceIds)
        expect([id, ledger.get(id)]).toEqual([id, [{ key: `${id}:1`, status: 'succeeded' }]]);
    }

    // 1. The advance renews the three together: billing dies once checkout charged the batch.
    const first = await killedAfterCharge(async (url) => {
      const advance = await callService(url, 'POST', `/v1/test_clocks/${clock.body.id}/advance`, caller(org), {
        frozen_time: '2026-03-01T00:00:00Z',
      });
      expect(advance.status).toBe(200);
    });
    expect(first).toMatchObject({ path: '/internal/charges/batch', statuses: ['succeeded', 'succeeded', 'succeeded'] });
    expect(first.keys).toHaveLength(COUNT);
    await expectChargedNotRecorded(first.keys);

    // 2. Started again, its sweep resumes the clock; the invoices are open already, so each is
    // renewed on its own, charged again under its key (the first answer comes back, nothing
    // new is charged): billing dies again after the first of those answers.
    const second = await killedAfterCharge();
    expect(second).toMatchObject({ path: '/internal/charges', statuses: ['succeeded'] });
    expect(first.keys).toContain(second.keys[0]);
    await expectChargedNotRecorded(first.keys);

    // 3. Started once more, it finishes every renewal: each invoice paid once, charged once.
    const restarted = startBilling(env);
    running = restarted.child;
    const url = await restarted.url;
    await eventually(async () => {
      const read = await callService(url, 'GET', `/v1/test_clocks/${clock.body.id}`, caller(org));
      expect(read.body).toMatchObject({ status: 'ready', frozen_time: '2026-03-01T00:00:00.000Z' });
    }, 60_000);
    const facts = await expectRenewedOncePerPeriod(
      infrastructure.database,
      { billing: schema, checkout: checkoutSchema },
      org,
      COUNT,
      ['2026-02-28T10:00:00Z'],
      '2026-03-31T10:00:00.000Z',
    );
    expect(facts.renewalInvoices.map((i) => `${i.id}:1`).sort()).toEqual([...first.keys].sort());
    const stopped = new Promise((resolve) => restarted.child.once('exit', resolve));
    restarted.child.kill('SIGTERM');
    await stopped;
  });
});
