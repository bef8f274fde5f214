import type { EventStore } from '@billing/eventstore';
import type { CollectedCard } from './processor';
import { sandboxCardFormsTable } from './ledger';

/**
 * The sandbox payment provider's card forms: the card last entered for each card-form token
 * (an embedded checkout's `sdk_token`), kept as the provider would keep it, ready to charge.
 * Entering another card replaces it (a buyer corrects a declined card).
 */
export class CardForms {
  constructor(private readonly store: EventStore) {}

  private get table() {
    return sandboxCardFormsTable(this.store.tables.schema);
  }

  async put(formToken: string, card: CollectedCard): Promise<void> {
    await this.store.database.query(
      `INSERT INTO ${this.table} (form_token, card) VALUES ($1, $2)
       ON CONFLICT (form_token) DO UPDATE SET card = EXCLUDED.card, updated_at = now()`,
      [formToken, JSON.stringify(card)],
    );
  }

  async find(formToken: string): Promise<CollectedCard | null> {
    const { rows } = await this.store.database.query<{ card: CollectedCard }>(
      `SELECT card FROM ${this.table} WHERE form_token = $1`,
      [formToken],
    );
    return rows[0]?.card ?? null;
  }
}
