import { startServiceForTest, type ServiceUnderTest } from '@billing/runtime';
import { checkoutService } from './service';

describe('checkout service', () => {
  let running: ServiceUnderTest;
  beforeAll(async () => (running = await startServiceForTest(checkoutService)));
  afterAll(() => running.stop());

  it('is ready with its event store in a schema of its own', async () => {
    expect(await (await fetch(`${running.service.url}/readyz`)).json()).toEqual({ status: 'ready' });
    const { rows } = await running.infrastructure.database.query(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'events' AND table_schema LIKE 'checkout_%'",
    );
    expect(rows.length).toBeGreaterThan(0);
  });
});
