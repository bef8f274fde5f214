import { livemodeOf } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { billingSettingsIn, billingSettingsOf } from '../settings/aggregate';
import type { LedgerSettings } from './decide';

/** What a credits command of the tenant carries: its livemode, low-balance threshold and overdraft limit. */
export async function ledgerSettingsOf(store: EventStore, tenant: Tenant, sql?: SqlExecutor): Promise<LedgerSettings> {
  const { organization, environment } = tenant;
  const settings = sql
    ? await billingSettingsIn(sql, store, organization, environment)
    : await billingSettingsOf(store, organization, environment);
  return {
    livemode: livemodeOf(environment),
    lowBalanceThreshold: settings.credits_low_balance_threshold,
    overdraftLimit: settings.credits_overdraft_limit,
  };
}
