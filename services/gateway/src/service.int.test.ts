import { startServiceForTest } from '@billing/runtime';
import { gatewayService } from './service';

describe('gateway service', () => {
  let running: Awaited<ReturnType<typeof startServiceForTest>>;
  beforeAll(async () => (running = await startServiceForTest(gatewayService)));
  afterAll(() => running.stop());

  it('is ready with its event store in the gateway schema', async () => {
    expect(await (await fetch(`${running.service.url}/readyz`)).json()).toEqual({ status: 'ready' });
    const { rows } = await running.infrastructure.database.query(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = 'gateway' AND table_name = 'events'",
    );
    expect(rows).toHaveLength(1);
  });
});
