/**
 * Monthly recurring revenue and churn, folded from the public events. Only the fields the
 * AsyncAPI document promises are read.
 *
 * - A subscription counts in MRR while its status is ACTIVE or PAST_DUE (a TRIAL pays nothing
 *   yet; a CANCELED one no longer pays).
 * - Its monthly amount is its `price` per `interval_count` intervals, brought to a month: a
 *   year is 12 months, a week 52/12 of a month, a day 365/12 of a month. Amounts stay exact
 *   (fractions of a TWD) while summed; a report rounds each total to the nearest whole TWD, half
 *   away from zero, once.
 * - A month's movements go to the UTC calendar month of the event's `occurred_at`: new MRR when a
 *   subscription first pays, churned MRR when a paying subscription is canceled, and the net of
 *   every other change (plan switches, reactivation) as expansion.
 * - Churn rate of a month: subscriptions churned in it over those paying when it began.
 */

export interface SubscriptionObject {
  id: string;
  customer_id: string;
  status: 'ACTIVE' | 'TRIAL' | 'PAST_DUE' | 'CANCELED';
  price: number;
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
}

export interface PublicEvent {
  id: string;
  type: string;
  stream: string;
  stream_version: number;
  occurred_at: string;
  organization: string;
  data: Record<string, unknown>;
}

export interface MonthReport {
  month: string;
  new_mrr: number;
  expansion_mrr: number;
  churned_mrr: number;
  churned_subscriptions: number;
  paying_at_start: number;
  churn_rate: number;
  checkouts_completed: number;
  checkout_revenue: number;
}

export interface MrrReport {
  mrr: number;
  paying_subscriptions: number;
  months: MonthReport[];
}

const MONTHS_PER_INTERVAL = { day: 12 / 365, week: 12 / 52, month: 1, year: 12 } as const;

export const monthlyAmount = (s: SubscriptionObject): number =>
  s.status === 'ACTIVE' || s.status === 'PAST_DUE' ? s.price / (MONTHS_PER_INTERVAL[s.interval] * s.interval_count) : 0;

const roundTwd = (amount: number) => Math.sign(amount) * Math.round(Math.abs(amount));

interface MonthTotals {
  newMrr: number;
  expansionMrr: number;
  churnedMrr: number;
  churned: number;
  payingAtStart: number;
  checkouts: number;
  checkoutRevenue: number;
}

const SUBSCRIPTION_EVENTS = new Set([
  'subscription.activated',
  'subscription.updated',
  'subscription.renewed',
  'subscription.past_due',
  'subscription.trial_will_end',
  'subscription.canceled',
]);

export class MrrLedger {
  private readonly seenEvents = new Set<string>();
  private readonly streamVersions = new Map<string, number>();
  private readonly monthly = new Map<string, number>();
  private readonly everPaid = new Set<string>();
  private readonly months = new Map<string, MonthTotals>();

  /** Folds one event; duplicates (same id) and stale ones (older stream_version) change nothing. */
  apply(event: PublicEvent): void {
    if (this.seenEvents.has(event.id)) return;
    this.seenEvents.add(event.id);
    if ((this.streamVersions.get(event.stream) ?? 0) >= event.stream_version) return;
    this.streamVersions.set(event.stream, event.stream_version);

    const month = this.monthOf(event.occurred_at);
    if (event.type === 'checkout.completed') {
      month.checkouts++;
      month.checkoutRevenue += Number(event.data.amount_total ?? 0);
      return;
    }
    if (!SUBSCRIPTION_EVENTS.has(event.type)) return;
    const subscription = event.data.object as SubscriptionObject;
    const before = this.monthly.get(subscription.id) ?? 0;
    const after = monthlyAmount(subscription);
    this.monthly.set(subscription.id, after);
    if (before === 0 && after > 0 && !this.everPaid.has(subscription.id)) {
      this.everPaid.add(subscription.id);
      month.newMrr += after;
    } else if (event.type === 'subscription.canceled' && before > 0) {
      month.churnedMrr += before;
      month.churned++;
    } else {
      if (after > 0) this.everPaid.add(subscription.id);
      month.expansionMrr += after - before;
    }
  }

  report(): MrrReport {
    const paying = [...this.monthly.values()].filter((amount) => amount > 0);
    return {
      mrr: roundTwd(paying.reduce((sum, amount) => sum + amount, 0)),
      paying_subscriptions: paying.length,
      months: [...this.months.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([month, t]) => ({
          month,
          new_mrr: roundTwd(t.newMrr),
          expansion_mrr: roundTwd(t.expansionMrr),
          churned_mrr: roundTwd(t.churnedMrr),
          churned_subscriptions: t.churned,
          paying_at_start: t.payingAtStart,
          churn_rate: t.payingAtStart === 0 ? 0 : t.churned / t.payingAtStart,
          checkouts_completed: t.checkouts,
          checkout_revenue: t.checkoutRevenue,
        })),
    };
  }

  private monthOf(occurredAt: string): MonthTotals {
    const key = occurredAt.slice(0, 7);
    let totals = this.months.get(key);
    if (!totals) {
      const payingAtStart = [...this.monthly.values()].filter((amount) => amount > 0).length;
      totals = {
        newMrr: 0,
        expansionMrr: 0,
        churnedMrr: 0,
        churned: 0,
        payingAtStart,
        checkouts: 0,
        checkoutRevenue: 0,
      };
      this.months.set(key, totals);
    }
    return totals;
  }
}
