import { conflict, notFound } from '@billing/contracts';
import { type DeliveryState, type WebhookDeliveryEvent, retryDelayMs } from './delivery';

export type RecordAttempt = {
  type: 'RecordAttempt';
  data: {
    deliveryId: string;
    /** The number the scheduler claimed; a stale claim (already recorded) changes nothing. */
    attempt: number;
    attemptedAt: Date;
    responseStatus: number | null;
    durationMs: number;
    error: string | null;
  };
};
export type ReplayDelivery = { type: 'ReplayDelivery'; data: { deliveryId: string; now: Date } };
/** The endpoint is deleted: a pending delivery stops; any other changes nothing. */
export type CancelDelivery = { type: 'CancelDelivery'; data: { deliveryId: string; now: Date } };
export type DeliveryCommand = RecordAttempt | ReplayDelivery | CancelDelivery;

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;

export function decide(command: DeliveryCommand, state: DeliveryState): WebhookDeliveryEvent[] {
  switch (command.type) {
    case 'RecordAttempt':
      return recordAttempt(command, state);
    case 'ReplayDelivery': {
      const { deliveryId, now } = command.data;
      if (state.status === 'Empty') throw notFound(`No such webhook delivery: ${deliveryId}`);
      if (state.status !== 'FAILED')
        throw conflict(`Only a FAILED delivery can be replayed; this one is ${state.status}`);
      const at = now.toISOString();
      return [
        { type: 'WebhookDeliveryReplayed', data: { delivery_id: deliveryId, replayed_at: at, next_attempt_at: at } },
      ];
    }
    case 'CancelDelivery': {
      if (state.status !== 'PENDING') return [];
      const { deliveryId, now } = command.data;
      return [
        {
          type: 'WebhookDeliveryCanceled',
          data: { delivery_id: deliveryId, canceled_at: now.toISOString(), reason: 'endpoint_deleted' },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function recordAttempt({ data }: RecordAttempt, state: DeliveryState): WebhookDeliveryEvent[] {
  if (state.status !== 'PENDING' || state.delivery.attempt_count + 1 !== data.attempt) return [];
  const base = {
    delivery_id: data.deliveryId,
    attempt: data.attempt,
    attempted_at: data.attemptedAt.toISOString(),
    response_status: data.responseStatus,
    duration_ms: Math.max(0, Math.round(data.durationMs)),
  };
  if (is2xx(data.responseStatus)) {
    return [
      {
        type: 'WebhookDeliveryAttempted',
        data: { ...base, outcome: 'succeeded', error: null, next_attempt_at: null },
      },
    ];
  }
  const delay = retryDelayMs(state.delivery.failures_in_run + 1);
  const error = data.error ?? `HTTP ${data.responseStatus}`;
  return [
    {
      type: 'WebhookDeliveryAttempted',
      data: {
        ...base,
        error,
        outcome: delay === undefined ? 'failed' : 'retrying',
        next_attempt_at: delay === undefined ? null : new Date(data.attemptedAt.getTime() + delay).toISOString(),
      },
    },
  ];
}
