import {
  AdminCreateCouponBody,
  CouponIdParams,
  type CouponTerms,
  CreateCouponBody,
  type Environment,
  ListCouponsQuery,
  UpdateCouponBody,
  livemodeOf,
  newId,
  notFound,
} from '@billing/contracts';
import { type EventStoreTransaction, type RecordedEvent, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { validate, adminOrganizationOf, secretCallerOf } from '@billing/service';
import type { Express } from 'express';
import { type Coupon, type CouponState, asCouponEvent, couponStream, evolve, initialState } from './coupon';
import { decide } from './decide';
import { findCoupon, listCoupons, toCouponResource } from './queries';
import { projectCoupons } from './read-model';

const aggregate = {
  initialState,
  evolve: (state: CouponState, event: RecordedEvent) => evolve(state, asCouponEvent(event)),
  decide,
};

const found = (state: CouponState | undefined, id: string): Coupon => {
  if (!state || state.status === 'Empty') throw notFound(`No such coupon: ${id}`);
  return state.coupon;
};

export function mountCouponRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;
  const project = (tx: EventStoreTransaction, events: RecordedEvent[]) => projectCoupons(tx, schema, events);

  async function createCoupon(organization: string, environment: Environment, terms: CouponTerms) {
    const couponId = newId('coupon');
    const at = now();
    const { state } = await handleCommand(
      store,
      couponStream(couponId),
      aggregate,
      { type: 'CreateCoupon', data: { couponId, organization, environment, terms, now: at } },
      { organization, environment, occurredAt: at, project },
    );
    return toCouponResource(found(state, couponId));
  }

  app.post('/v1/coupons', validate({ body: CreateCouponBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    res.status(201).json(await createCoupon(caller.organization, caller.environment, res.locals.input.body));
  });

  app.post('/admin/coupons', validate({ body: AdminCreateCouponBody }), async (req, res) => {
    const { environment, ...terms } = res.locals.input.body;
    res.status(201).json(await createCoupon(adminOrganizationOf(req), environment, terms));
  });

  app.get('/v1/coupons', validate({ query: ListCouponsQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { coupons, hasMore } = await listCoupons(db, schema, caller, res.locals.input.query);
    res.json({
      object: 'list',
      data: coupons.map(toCouponResource),
      has_more: hasMore,
      livemode: livemodeOf(caller.environment),
    });
  });

  app.get('/v1/coupons/:id', validate({ params: CouponIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const coupon = await findCoupon(db, schema, caller, id);
    if (!coupon) throw notFound(`No such coupon: ${id}`);
    res.json(toCouponResource(coupon));
  });

  const updateSchemas = { params: CouponIdParams, body: UpdateCouponBody.default({}) };
  app.patch('/v1/coupons/:id', validate(updateSchemas), async (req, res) => {
    const caller = secretCallerOf(req);
    const { params, body: changes } = res.locals.input;
    const at = now();
    const { state } = await handleCommand(
      store,
      couponStream(params.id),
      aggregate,
      {
        type: 'UpdateCoupon',
        data: {
          couponId: params.id,
          organization: caller.organization,
          environment: caller.environment,
          changes,
          now: at,
        },
      },
      { organization: caller.organization, environment: caller.environment, occurredAt: at, project },
    );
    res.json(toCouponResource(found(state, params.id)));
  });
}
