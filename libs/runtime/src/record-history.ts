import { type RecordHistory, RecordHistoryQuery, notFound, recordStreamOf } from '@billing/contracts';
import { type EventStore, actingAs } from '@billing/eventstore';
import { actorOf, adminOrganizationOf, validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';

/**
 * Every route of a service runs on behalf of the actor the gateway signed for the request, so
 * the event store records it on whatever the request appends.
 */
export const actOnBehalfOfCaller: RequestHandler = (req, _res, next) => actingAs(actorOf(req), next);

/**
 * `GET /admin/events?record_id=&environment=`: the history of one of this service's records
 * (`RECORD_STREAMS`), oldest first, for the admin API's `/organizations/{org}/events`. Another
 * organization's or environment's record is 404, like one that does not exist.
 */
export function mountRecordHistory(app: Express, service: string, store: EventStore): void {
  app.get('/admin/events', validate({ query: RecordHistoryQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const query = res.locals.input.query as RecordHistoryQuery;
    const entry = recordStreamOf(query.record_id);
    if (entry?.service !== service) throw notFound(`No such record: ${query.record_id}`);
    const stream = `${entry.stream}-${query.record_id}`;
    const page = await store.readHistory(stream, {
      afterVersion: query.starting_after ?? 0,
      limit: query.limit,
    });
    // Every event of a stream has its record's tenant; a page past the end asks the first one.
    const owner =
      page.events[0] ??
      (query.starting_after ? (await store.readHistory(stream, { afterVersion: 0, limit: 1 })).events[0] : undefined);
    if (owner?.organization !== organization || owner.environment !== query.environment) {
      throw notFound(`No such record: ${query.record_id}`);
    }
    const body: RecordHistory = {
      object: 'list',
      record_id: query.record_id,
      data: page.events.map((event) => ({
        object: 'record_event',
        version: event.version,
        type: event.type,
        occurred_at: event.occurredAt,
        actor: event.actor,
        data: event.data,
      })),
      has_more: page.hasMore,
    };
    res.json(body);
  });
}
