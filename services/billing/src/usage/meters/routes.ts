import {
  CreateMeterBody,
  type Meter,
  MeterIdParams,
  USAGE_LIMITS,
  UpdateMeterBody,
  notFound,
  conflict,
  livemodeOf,
  newId,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import type { Express, Request, Response } from 'express';
import { meterAggregate } from './aggregate';
import type { ChangeMeter } from './meter';
import { findMeter, isMeterKeyTaken, listMeters } from './read-model';

/** `/v1/meters` (Secret Key): create one, list them, read, rename, deactivate and reactivate one (docs/usage.md). */
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
      status: 'active',
      created_at: context.now().toISOString(),
      updated_at: context.now().toISOString(),
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

  app.get('/v1/meters/:id', validate({ params: MeterIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const meter = await findMeter(store.database, schema, caller, res.locals.input.params.id);
    if (!meter) throw noSuchMeter(res.locals.input.params.id);
    res.json(meter);
  });

  /** Applies one change to the caller's meter and answers the meter as it is after it (unchanged: as it was). */
  const change = async (req: Request, res: Response, what: ChangeMeter['data']['change']) => {
    const caller = secretCallerOf(req);
    const tenant: Tenant = { organization: caller.organization, environment: caller.environment };
    const id: string = res.locals.input.params.id;
    // Another tenant's meter is not found, as if absent.
    if (!(await findMeter(store.database, schema, tenant, id))) throw noSuchMeter(id);
    const now = context.now();
    const { state } = await meterAggregate.handle(
      store,
      id,
      { type: 'ChangeMeter', data: { ...tenant, meterId: id, change: what, now } },
      { ...tenant, occurredAt: now },
    );
    if (state.status === 'Empty') throw noSuchMeter(id);
    res.json(state.meter);
  };

  app.post('/v1/meters/:id', validate({ params: MeterIdParams, body: UpdateMeterBody }), (req, res) =>
    change(req, res, { name: res.locals.input.body.name }),
  );
  app.post('/v1/meters/:id/deactivate', validate({ params: MeterIdParams }), (req, res) =>
    change(req, res, { status: 'inactive' }),
  );
  app.post('/v1/meters/:id/reactivate', validate({ params: MeterIdParams }), (req, res) =>
    change(req, res, { status: 'active' }),
  );
}

const noSuchMeter = (id: string) => notFound(`No such meter: ${id}`);

const keyTaken = (key: string) =>
  conflict(`A meter with key ${key} exists in this environment`, [{ path: 'key', code: 'meter_exists', message: key }]);
