import {
  CreateMeterBody,
  type Meter,
  USAGE_LIMITS,
  conflict,
  livemodeOf,
  newId,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { meterAggregate } from './aggregate';
import { isMeterKeyTaken, listMeters } from './read-model';

/** `/v1/meters` (Secret Key): create one, list them (docs/usage.md). */
export function mountMeterRoutes(app: Express, context: ServiceContext): void {
  const { store } = context;
  const { schema } = store.tables;

  app.post('/v1/meters', validate({ body: CreateMeterBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    const tenant: Tenant = { organization: caller.organization, environment: caller.environment };
    const body = res.locals.input.body;
    const existing = await listMeters(store.database, schema, tenant);
    if (existing.some((meter) => meter.key === body.key)) throw keyTaken(body.key);
    if (existing.length >= USAGE_LIMITS.metersPerEnvironment) {
      const message = `An environment has at most ${USAGE_LIMITS.metersPerEnvironment} meters`;
      throw validationError([{ path: 'key', code: 'meter_limit', message }], message);
    }
    const meter: Meter = {
      object: 'meter',
      id: newId('meter'),
      key: body.key,
      name: body.name,
      aggregation: body.aggregation,
      credits_per_unit: body.credits_per_unit ?? null,
      created_at: context.now().toISOString(),
      livemode: livemodeOf(tenant.environment),
    };
    try {
      await meterAggregate.handle(
        store,
        meter.id,
        { type: 'CreateMeter', data: { ...tenant, meter } },
        {
          ...tenant,
          occurredAt: context.now(),
        },
      );
    } catch (error) {
      throw isMeterKeyTaken(error) ? keyTaken(body.key) : error;
    }
    res.status(201).json(meter);
  });

  app.get('/v1/meters', async (req, res) => {
    const caller = secretCallerOf(req);
    const data = await listMeters(store.database, schema, caller);
    res.json({ object: 'list', data, livemode: livemodeOf(caller.environment) });
  });
}

const keyTaken = (key: string) =>
  conflict(`A meter with key ${key} exists in this environment`, [{ path: 'key', code: 'meter_exists', message: key }]);
