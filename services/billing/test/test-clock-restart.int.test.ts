import { type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { testClockAggregate } from '../src/test-clocks/aggregate';
import { caller, client, newOrg } from './helpers';

jest.setTimeout(60000);

const now = () => new Date('2026-11-21T08:00:00.000Z');

describe('A test clock advance cut off by a restart', () => {
  it('resumes at the next start, not on a sweep, and the clock becomes ready', async () => {
    const infrastructure = await testInfrastructure('billing-clock-restart');
    const schema = `billing_clock_restart_${Date.now().toString(36)}`;
    // The sweep runs once an hour here: only the start itself can bring the clock back within the
    // wait below (a bound on the wall clock, 5 s, once failed a loaded CI run at 6.2 s).
    const config = { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' };
    const start = () => startServiceForTest(billingService, { infrastructure, schema, now, config });
    let running: ServiceUnderTest = await start();
    const { call } = client(() => running);
    try {
      const org = newOrg();
      const clock = await call('POST', '/v1/test_clocks', caller(org), { frozen_time: '2026-01-31T10:00:00Z' });
      const clockId: string = clock.body.id;
      // What the advance route records before it runs the advance, then the process dies.
      const tenant = { organization: org, environment: 'SANDBOX' as const };
      const { store } = running.service.context;
      const startAdvance = { ...tenant, clockId, now: now(), targetTime: new Date('2026-03-01T00:00:00Z') };
      await testClockAggregate.handle(
        store,
        clockId,
        { type: 'StartAdvance', data: startAdvance },
        { ...tenant, occurredAt: now() },
      );
      await running.service.shutdown();

      running = await start();
      await eventually(async () => {
        const { body } = await call('GET', `/v1/test_clocks/${clockId}`, caller(org));
        expect(body).toMatchObject({ status: 'ready', frozen_time: '2026-03-01T00:00:00.000Z' });
      }, 30_000);
    } finally {
      await running.stop();
      await infrastructure.close();
    }
  });
});
