import { deciderSpec } from '@billing/testing';
import { deliveryAggregate } from './aggregate';
import type { WebhookDeliveryEvent } from './delivery';

const at = (minutes: number) => new Date(Date.parse('2026-11-21T08:00:00.000Z') + minutes * 60_000);
const spec = deciderSpec(deliveryAggregate);

const scheduled: WebhookDeliveryEvent = {
  type: 'WebhookDeliveryScheduled',
  data: {
    delivery_id: 'whd_1',
    endpoint_id: 'wh_1',
    event_id: 'evt_1',
    event_type: 'checkout.completed',
    body: '{}',
    created_at: at(0).toISOString(),
    next_attempt_at: at(0).toISOString(),
  },
};
const failed = (attempt: number, minute: number, next: number | null): WebhookDeliveryEvent => ({
  type: 'WebhookDeliveryAttempted',
  data: {
    delivery_id: 'whd_1',
    attempt,
    attempted_at: at(minute).toISOString(),
    outcome: next === null ? 'failed' : 'retrying',
    response_status: 500,
    duration_ms: 3,
    error: 'HTTP 500',
    next_attempt_at: next === null ? null : at(next).toISOString(),
  },
});
const succeeded: WebhookDeliveryEvent = {
  type: 'WebhookDeliveryAttempted',
  data: { ...(failed(1, 0, null).data as object), outcome: 'succeeded', response_status: 200, error: null } as never,
};
const record = (attempt: number, minute: number, responseStatus: number | null, error: string | null = null) => ({
  type: 'RecordAttempt' as const,
  data: { deliveryId: 'whd_1', attempt, attemptedAt: at(minute), responseStatus, durationMs: 3.4, error },
});

const cancel = (minute: number) => ({
  type: 'CancelDelivery' as const,
  data: { deliveryId: 'whd_1', now: at(minute) },
});

describe('WebhookDelivery', () => {
  describe('when pending', () => {
    it('succeeds on a 2xx', () =>
      spec
        .given([scheduled])
        .when(record(1, 0, 204))
        .then([
          {
            type: 'WebhookDeliveryAttempted',
            data: {
              delivery_id: 'whd_1',
              attempt: 1,
              attempted_at: at(0).toISOString(),
              outcome: 'succeeded',
              response_status: 204,
              duration_ms: 3,
              error: null,
              next_attempt_at: null,
            },
          },
        ]));

    it('retries one minute after the first failure', () =>
      spec
        .given([scheduled])
        .when(record(1, 0, 500))
        .then([failed(1, 0, 1)]));

    it('doubles the wait after each failure: 1, 2, 4, 8, 16 minutes', () =>
      spec
        .given([scheduled, failed(1, 0, 1), failed(2, 1, 3), failed(3, 3, 7)])
        .when(record(4, 7, 500))
        .then([failed(4, 7, 15)]));

    it('fails after the sixth attempt', () =>
      spec
        .given([scheduled, failed(1, 0, 1), failed(2, 1, 3), failed(3, 3, 7), failed(4, 7, 15), failed(5, 15, 31)])
        .when(record(6, 31, 500))
        .then([failed(6, 31, null)]));

    it('counts a timeout as a failure with its reason', () => {
      const [event] = deliveryAggregate.decide(
        record(1, 0, null, 'timeout after 10000 ms'),
        [scheduled].reduce(deliveryAggregate.evolve, deliveryAggregate.initialState()),
      );
      expect(event!.data).toMatchObject({
        outcome: 'retrying',
        response_status: null,
        error: 'timeout after 10000 ms',
      });
    });

    it('ignores an attempt number recorded already (a stale claim)', () =>
      spec
        .given([scheduled, failed(1, 0, 1)])
        .when(record(1, 0, 200))
        .then([]));
  });

  describe('when failed', () => {
    const history = [
      scheduled,
      failed(1, 0, 1),
      failed(2, 1, 3),
      failed(3, 3, 7),
      failed(4, 7, 15),
      failed(5, 15, 31),
      failed(6, 31, null),
    ];
    it('records no more attempts', () =>
      spec
        .given(history)
        .when(record(7, 40, 200))
        .then([]));

    it('is replayed now, with a fresh schedule', () => {
      spec
        .given(history)
        .when({ type: 'ReplayDelivery', data: { deliveryId: 'whd_1', now: at(90) } })
        .then([
          {
            type: 'WebhookDeliveryReplayed',
            data: { delivery_id: 'whd_1', replayed_at: at(90).toISOString(), next_attempt_at: at(90).toISOString() },
          },
        ]);
      const replayed = deliveryAggregate.evolve(
        history.reduce(deliveryAggregate.evolve, deliveryAggregate.initialState()),
        {
          type: 'WebhookDeliveryReplayed',
          data: { delivery_id: 'whd_1', replayed_at: at(90).toISOString(), next_attempt_at: at(90).toISOString() },
        },
      );
      expect(deliveryAggregate.decide(record(7, 90, 500), replayed)).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({ attempt: 7, next_attempt_at: at(91).toISOString() }),
        }),
      ]);
    });
  });

  describe('when succeeded', () => {
    it('cannot be replayed', () =>
      spec
        .given([scheduled, succeeded])
        .when({ type: 'ReplayDelivery', data: { deliveryId: 'whd_1', now: at(5) } })
        .thenThrows(/FAILED/));

    it('is not canceled when its endpoint is deleted', () =>
      spec.given([scheduled, succeeded]).when(cancel(5)).then([]));
  });

  describe('when its endpoint is deleted', () => {
    const canceled: WebhookDeliveryEvent = {
      type: 'WebhookDeliveryCanceled',
      data: { delivery_id: 'whd_1', canceled_at: at(2).toISOString(), reason: 'endpoint_deleted' },
    };

    it('stops while pending', () =>
      spec
        .given([scheduled, failed(1, 0, 1)])
        .when(cancel(2))
        .then([canceled]));

    it('ignores an attempt that was in flight, and cannot be replayed', () => {
      spec
        .given([scheduled, failed(1, 0, 1), canceled])
        .when(record(2, 2, 200))
        .then([]);
      spec
        .given([scheduled, canceled])
        .when({ type: 'ReplayDelivery', data: { deliveryId: 'whd_1', now: at(5) } })
        .thenThrows(/this one is CANCELED/);
    });

    it('keeps a failed delivery as it is', () =>
      spec
        .given([scheduled, failed(1, 0, null)])
        .when(cancel(2))
        .then([]));
  });
});
