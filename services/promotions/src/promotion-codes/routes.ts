import {
  CreatePromotionCodeBody,
  ListPromotionCodesQuery,
  ListRedemptionsQuery,
  PromotionCodeIdParams,
  UpdatePromotionCodeBody,
  type UpdatePromotionCodeBody as Changes,
  type CallerIdentity,
  livemodeOf,
  newId,
  notFound,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate, secretCallerOf } from '@billing/service';
import type { Express } from 'express';
import { findCoupon } from '../coupons/queries';
import { promotionCodeAggregate } from './aggregate';
import { findPromotionCode, listPromotionCodes, listRedemptions, toPromotionCodeResource } from './queries';

export function mountPromotionCodeRoutes(app: Express, { store, now }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  /** Reads back the row the append's transaction wrote: what the client sees is the read model. */
  async function respond(caller: CallerIdentity, id: string) {
    const view = await findPromotionCode(db, schema, caller, id);
    if (!view) throw notFound(`No such promotion code: ${id}`);
    return { success: true as const, data: toPromotionCodeResource(view) };
  }

  async function update(caller: CallerIdentity, id: string, changes: Changes) {
    const at = now();
    await promotionCodeAggregate.handle(
      store,
      id,
      {
        type: 'UpdatePromotionCode',
        data: {
          promotionCodeId: id,
          organization: caller.organization,
          environment: caller.environment,
          changes,
          now: at,
        },
      },
      { organization: caller.organization, environment: caller.environment, occurredAt: at },
    );
    return respond(caller, id);
  }

  app.post('/v1/promotion-codes', validate({ body: CreatePromotionCodeBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    const fields = res.locals.input.body;
    if (!(await findCoupon(db, schema, caller, fields.coupon_id))) {
      throw validationError([
        { path: 'coupon_id', message: `No such coupon: ${fields.coupon_id}`, code: 'coupon_not_found' },
      ]);
    }
    const promotionCodeId = newId('promotionCode');
    const at = now();
    await promotionCodeAggregate.handle(
      store,
      promotionCodeId,
      {
        type: 'CreatePromotionCode',
        data: { promotionCodeId, organization: caller.organization, environment: caller.environment, fields, now: at },
      },
      { organization: caller.organization, environment: caller.environment, occurredAt: at },
    );
    res.status(201).json(await respond(caller, promotionCodeId));
  });

  app.get('/v1/promotion-codes', validate({ query: ListPromotionCodesQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const query = res.locals.input.query;
    const { codes, total } = await listPromotionCodes(db, schema, caller, query);
    res.json({
      success: true,
      data: { promotion_codes: codes.map(toPromotionCodeResource), total, limit: query.limit, offset: query.offset },
    });
  });

  app.get('/v1/promotion-codes/:id', validate({ params: PromotionCodeIdParams }), async (req, res) => {
    res.json(await respond(secretCallerOf(req), res.locals.input.params.id));
  });

  const updateSchemas = { params: PromotionCodeIdParams, body: UpdatePromotionCodeBody.default({}) };
  app.patch('/v1/promotion-codes/:id', validate(updateSchemas), async (req, res) => {
    const { params, body } = res.locals.input;
    res.json(await update(secretCallerOf(req), params.id, body));
  });

  app.delete('/v1/promotion-codes/:id', validate({ params: PromotionCodeIdParams }), async (req, res) => {
    res.json(await update(secretCallerOf(req), res.locals.input.params.id, { active: false }));
  });

  const redemptionSchemas = { params: PromotionCodeIdParams, query: ListRedemptionsQuery };
  app.get('/v1/promotion-codes/:id/redemptions', validate(redemptionSchemas), async (req, res) => {
    const caller = secretCallerOf(req);
    const { params, query } = res.locals.input;
    if (!(await findPromotionCode(db, schema, caller, params.id))) {
      throw notFound(`No such promotion code: ${params.id}`);
    }
    const data = await listRedemptions(db, schema, params.id, query);
    res.json({ success: true, data, livemode: livemodeOf(caller.environment) });
  });
}
