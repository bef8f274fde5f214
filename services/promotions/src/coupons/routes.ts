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
import type { ServiceContext } from '@billing/runtime';
import { validate, adminOrganizationOf, secretCallerOf } from '@billing/service';
import type { Express } from 'express';
import { couponAggregate } from './aggregate';
import type { Coupon, CouponState } from './coupon';
import { findCoupon, listCoupons, toCouponResource } from './queries';

const found = (state: CouponState | undefined, id: string): Coupon => {
  if (!state || state.status === 'Empty') throw notFound(`No such coupon: ${id}`);
  return state.coupon;
};

export function mountCouponRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  async function createCoupon(organization: string, environment: Environment, terms: CouponTerms) {
    const couponId = newId('coupon');
    const at = now();
    const { state } = await couponAggregate.handle(
      store,
      couponId,
      { type: 'CreateCoupon', data: { couponId, organization, environment, terms, now: at } },
      { organization, environment, occurredAt: at },
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
    const { state } = await couponAggregate.handle(
      store,
      params.id,
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
      { organization: caller.organization, environment: caller.environment, occurredAt: at },
    );
    res.json(toCouponResource(found(state, params.id)));
  });
}
