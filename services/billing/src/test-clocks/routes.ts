import {
  AdvanceTestClockBody,
  CreateTestClockBody,
  ListTestClocksQuery,
  TestClockIdParams,
  badRequest,
  newId,
  notFound,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import type { Express, Request } from 'express';
import { startClockRun } from '../engine/test-clock-advance';
import { testClockAggregate } from './aggregate';
import type { TestClockCommand } from './clock';
import { findTestClock, listTestClocks } from './read-model';

/** Test clocks are a Sandbox tool: a Production key gets 400 on every test-clock route. */
function sandboxCaller(req: Request): Tenant {
  const caller = secretCallerOf(req);
  if (caller.environment !== 'SANDBOX') throw badRequest('Test clocks exist in Sandbox only; use a Sandbox key');
  return { organization: caller.organization, environment: caller.environment };
}

/** `/v1/test_clocks` (Secret Key, Sandbox): create, read, delete and advance. */
export function mountTestClockRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;

  async function run(tenant: Tenant, clockId: string, command: TestClockCommand) {
    return testClockAggregate.handle(store, clockId, command, { ...tenant, occurredAt: now() });
  }
  async function read(tenant: Tenant, id: string) {
    const clock = await findTestClock(store.database, schema, tenant, id);
    if (!clock) throw notFound(`No such test clock: ${id}`);
    return clock;
  }

  app.post('/v1/test_clocks', validate({ body: CreateTestClockBody }), async (req, res) => {
    const tenant = sandboxCaller(req);
    const { frozen_time, name } = res.locals.input.body;
    const clockId = newId('testClock');
    const data = { ...tenant, clockId, now: now(), frozenTime: new Date(frozen_time), name: name ?? null };
    await run(tenant, clockId, { type: 'CreateTestClock', data });
    res.status(201).json(await read(tenant, clockId));
  });

  app.get('/v1/test_clocks', validate({ query: ListTestClocksQuery }), async (req, res) => {
    const page = await listTestClocks(store.database, schema, sandboxCaller(req), res.locals.input.query);
    res.json({ object: 'list', data: page.documents, has_more: page.hasMore, livemode: false });
  });

  app.get('/v1/test_clocks/:id', validate({ params: TestClockIdParams }), async (req, res) => {
    res.json(await read(sandboxCaller(req), res.locals.input.params.id));
  });

  app.delete('/v1/test_clocks/:id', validate({ params: TestClockIdParams }), async (req, res) => {
    const tenant = sandboxCaller(req);
    const clockId = res.locals.input.params.id;
    await run(tenant, clockId, { type: 'DeleteTestClock', data: { ...tenant, clockId, now: now() } });
    res.json({ id: clockId, object: 'test_clock', deleted: true });
  });

  /** Answers at once with the clock `advancing`; the due work runs behind it, then the clock is `ready`. */
  app.post(
    '/v1/test_clocks/:id/advance',
    validate({ params: TestClockIdParams, body: AdvanceTestClockBody }),
    async (req, res) => {
      const tenant = sandboxCaller(req);
      const clockId = res.locals.input.params.id;
      const targetTime = new Date(res.locals.input.body.frozen_time);
      await run(tenant, clockId, { type: 'StartAdvance', data: { ...tenant, clockId, now: now(), targetTime } });
      res.json(await read(tenant, clockId));
      void startClockRun(context, { id: clockId, ...tenant });
    },
  );
}
