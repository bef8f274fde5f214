import { conflict } from '@billing/contracts';
import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable } from '@billing/eventstore';
import {
  type PromotionCode,
  type PromotionCodeEvent,
  type RedemptionStatus,
  promotionCodeEvents,
} from './promotion-code';

/** A code with its counts: `current_redemptions` (ACTIVE) and `held_redemptions` (RESERVED + ACTIVE). */
export type PromotionCodeView = PromotionCode & { current_redemptions: number; held_redemptions: number };

export interface RedemptionRow {
  id: string;
  promotion_code_id: string;
  organization: string;
  environment: string;
  checkout_session_id: string;
  customer_id: string | null;
  external_id: string | null;
  order_id: string | null;
  discount_amount: number;
  status: RedemptionStatus;
  reserved_at: string;
  redeemed_at: string | null;
}

const CODE_INDEX = 'promotion_codes_code_unique';

/** One row per code; the redemptions are rows of their own, not documents. */
const codes = documentTable<PromotionCodeView>({
  name: 'promotion_codes',
  columns: { code: 'text NOT NULL', coupon_id: 'text NOT NULL', active: 'boolean NOT NULL' },
  columnsOf: (view) => [view.code, view.coupon_id, view.active],
  indexes: [
    // Codes are unique per organization and environment; this index is what enforces it.
    `CREATE UNIQUE INDEX IF NOT EXISTS ${CODE_INDEX} ON {table} (organization, environment, code)`,
    'CREATE INDEX IF NOT EXISTS promotion_codes_newest_first ON {table} (organization, environment, created_at DESC, id DESC)',
  ],
});

export const tablesOf = (schema: string) => ({
  codes: codes.table(schema),
  redemptions: `${schema}.redemptions`,
});

export async function migratePromotionCodesReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  const t = tablesOf(schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};${codes.ddl(schema)}
    CREATE TABLE IF NOT EXISTS ${t.redemptions} (
      id text PRIMARY KEY,
      promotion_code_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      checkout_session_id text NOT NULL,
      customer_id text,
      external_id text,
      order_id text,
      discount_amount integer NOT NULL,
      status text NOT NULL,
      reserved_at timestamptz NOT NULL,
      redeemed_at timestamptz
    );
    CREATE INDEX IF NOT EXISTS redemptions_by_code ON ${t.redemptions} (promotion_code_id, redeemed_at DESC, id DESC);
    -- Added with customer identity (docs/customer-identity.md); older rows have none.
    ALTER TABLE ${t.redemptions} ADD COLUMN IF NOT EXISTS email text;
  `);
}

/**
 * Applies promotion-code events in the append's transaction: the code's document, the
 * redemption rows, and the code's counts recomputed from those rows. Events at or below the
 * code row's stream version were applied already and are skipped.
 */
export async function projectPromotionCodes(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const t = tablesOf(schema);
  for (const recorded of events) {
    const event = promotionCodeEvents.of(recorded);
    if (!event) continue;
    const id = event.data.promotion_code_id;
    const current = await codes.read(sql, schema, id);
    if (current && current.stream_version >= recorded.stream_version) continue;
    if (event.type === 'PromotionCodeCreated') {
      const { promotion_code_id, ...fields } = event.data;
      const view: PromotionCodeView = {
        id: promotion_code_id,
        ...fields,
        updated_at: fields.created_at,
        current_redemptions: 0,
        held_redemptions: 0,
      };
      await insertCode(sql, schema, view, recorded.stream_version);
      continue;
    }
    if (!current) continue;
    let view = current.document;
    if (event.type === 'PromotionCodeUpdated') {
      view = { ...view, ...event.data.changes, updated_at: event.data.updated_at };
    } else {
      await applyRedemption(sql, t.redemptions, view, event);
      view = { ...view, ...(await countsOf(sql, t.redemptions, id)) };
    }
    await codes.write(sql, schema, view, recorded.stream_version);
  }
}

async function insertCode(sql: SqlExecutor, schema: string, view: PromotionCodeView, version: number) {
  try {
    await codes.write(sql, schema, view, version);
  } catch (error) {
    const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
    if (code === '23505' && (constraint === CODE_INDEX || (message ?? '').includes(CODE_INDEX))) {
      throw conflict('A promotion code with this code already exists', [
        { path: 'code', message: `code "${view.code}" is already used`, code: 'code_taken' },
      ]);
    }
    throw error;
  }
}

async function applyRedemption(
  sql: SqlExecutor,
  table: string,
  code: PromotionCodeView,
  event: Exclude<PromotionCodeEvent, { type: 'PromotionCodeCreated' | 'PromotionCodeUpdated' }>,
) {
  switch (event.type) {
    case 'RedemptionReserved': {
      const d = event.data;
      await sql.query(
        `INSERT INTO ${table} (id, promotion_code_id, organization, environment, checkout_session_id, customer_id,
           external_id, email, discount_amount, status, reserved_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $10, $8, 'RESERVED', $9) ON CONFLICT (id) DO NOTHING`,
        [
          d.redemption_id,
          d.promotion_code_id,
          code.organization,
          code.environment,
          d.checkout_session_id,
          d.customer_id,
          d.external_id,
          d.discount_amount,
          d.reserved_at,
          d.email ?? null,
        ],
      );
      return;
    }
    case 'RedemptionAssigned': {
      const d = event.data;
      await sql.query(`UPDATE ${table} SET customer_id = $2, external_id = $3, email = $4 WHERE id = $1`, [
        d.redemption_id,
        d.customer_id,
        d.external_id,
        d.email,
      ]);
      return;
    }
    case 'PromotionCodeRedeemed': {
      const d = event.data;
      await sql.query(
        `UPDATE ${table} SET status = 'ACTIVE', order_id = $2, customer_id = $3, external_id = $4, redeemed_at = $5
         WHERE id = $1`,
        [d.redemption_id, d.order_id, d.customer_id, d.external_id, d.redeemed_at],
      );
      return;
    }
    case 'RedemptionReleased':
      await sql.query(`UPDATE ${table} SET status = 'RELEASED' WHERE id = $1`, [event.data.redemption_id]);
      return;
    case 'RedemptionVoided':
      await sql.query(`UPDATE ${table} SET status = 'VOIDED' WHERE id = $1`, [event.data.redemption_id]);
      return;
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

async function countsOf(sql: SqlExecutor, table: string, codeId: string) {
  const { rows } = await sql.query<{ current: number; held: number }>(
    `SELECT count(*) FILTER (WHERE status = 'ACTIVE')::integer AS current,
            count(*) FILTER (WHERE status IN ('RESERVED', 'ACTIVE'))::integer AS held
     FROM ${table} WHERE promotion_code_id = $1`,
    [codeId],
  );
  return { current_redemptions: rows[0]?.current ?? 0, held_redemptions: rows[0]?.held ?? 0 };
}
