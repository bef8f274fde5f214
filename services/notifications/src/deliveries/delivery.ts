import { WEBHOOK_RETRY_MINUTES } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const deliveryStream = (deliveryId: string) => `webhook_delivery-${deliveryId}`;

/** One webhook event for one endpoint: scheduled once, then attempted until it succeeds or fails. */
export type WebhookDeliveryScheduled = {
  type: 'WebhookDeliveryScheduled';
  data: {
    delivery_id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    /** The exact request body; the signature is computed over these bytes at each attempt. */
    body: string;
    created_at: string;
    next_attempt_at: string;
  };
};
export type WebhookDeliveryAttempted = {
  type: 'WebhookDeliveryAttempted';
  data: {
    delivery_id: string;
    attempt: number;
    attempted_at: string;
    outcome: 'succeeded' | 'retrying' | 'failed';
    response_status: number | null;
    duration_ms: number;
    error: string | null;
    next_attempt_at: string | null;
  };
};
export type WebhookDeliveryReplayed = {
  type: 'WebhookDeliveryReplayed';
  data: { delivery_id: string; replayed_at: string; next_attempt_at: string };
};
/** The endpoint was deleted while the delivery was still pending: nothing more is sent. */
export type WebhookDeliveryCanceled = {
  type: 'WebhookDeliveryCanceled';
  data: { delivery_id: string; canceled_at: string; reason: 'endpoint_deleted' };
};
export type WebhookDeliveryEvent =
  WebhookDeliveryScheduled | WebhookDeliveryAttempted | WebhookDeliveryReplayed | WebhookDeliveryCanceled;

export const deliveryEvents = streamEvents<WebhookDeliveryEvent>({
  WebhookDeliveryScheduled: true,
  WebhookDeliveryAttempted: true,
  WebhookDeliveryReplayed: true,
  WebhookDeliveryCanceled: true,
});

export type Delivery = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** Attempts in all, replays included; the next attempt's number is this plus one. */
  attempt_count: number;
  /** Failed attempts since the delivery was scheduled or last replayed: picks the next delay. */
  failures_in_run: number;
  next_attempt_at: string | null;
  created_at: string;
};

export type DeliveryState =
  { status: 'Empty' } | { status: 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED'; delivery: Delivery };

export const initialState = (): DeliveryState => ({ status: 'Empty' });

export function evolve(state: DeliveryState, event: WebhookDeliveryEvent): DeliveryState {
  switch (event.type) {
    case 'WebhookDeliveryScheduled': {
      const d = event.data;
      return {
        status: 'PENDING',
        delivery: {
          id: d.delivery_id,
          endpoint_id: d.endpoint_id,
          event_id: d.event_id,
          event_type: d.event_type,
          attempt_count: 0,
          failures_in_run: 0,
          next_attempt_at: d.next_attempt_at,
          created_at: d.created_at,
        },
      };
    }
    case 'WebhookDeliveryAttempted': {
      if (state.status === 'Empty') return state;
      const d = event.data;
      const delivery = {
        ...state.delivery,
        attempt_count: d.attempt,
        failures_in_run:
          d.outcome === 'succeeded' ? state.delivery.failures_in_run : state.delivery.failures_in_run + 1,
        next_attempt_at: d.next_attempt_at,
      };
      const status = d.outcome === 'succeeded' ? 'SUCCEEDED' : d.outcome === 'failed' ? 'FAILED' : 'PENDING';
      return { status, delivery };
    }
    case 'WebhookDeliveryReplayed':
      if (state.status === 'Empty') return state;
      return {
        status: 'PENDING',
        delivery: { ...state.delivery, failures_in_run: 0, next_attempt_at: event.data.next_attempt_at },
      };
    case 'WebhookDeliveryCanceled':
      if (state.status === 'Empty') return state;
      return { status: 'CANCELED', delivery: { ...state.delivery, next_attempt_at: null } };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

/** After the n-th failure of a run: 1, 2, 4, 8, 16 minutes, then none (the delivery fails). */
export function retryDelayMs(failures: number): number | undefined {
  const minutes = WEBHOOK_RETRY_MINUTES[failures - 1];
  return minutes === undefined ? undefined : minutes * 60_000;
}
