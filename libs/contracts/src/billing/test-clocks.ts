import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { idText } from '../shared/text';

const timestamp = z.iso.datetime();
/** Input times may carry an offset; they are kept in UTC. */
const inputTime = z.iso.datetime({ offset: true });

/**
 * A Sandbox clock that only moves when told to (Stripe's test clocks). Subscriptions started
 * by a checkout session created with `test_clock` live on its time: advancing it runs what
 * falls due (trial ends, period-end cancellations) in order, at the time each falls due.
 */
export const TestClock = z
  .object({
    object: z.literal('test_clock'),
    id: z.string().describe('Prefix clock_'),
    frozen_time: timestamp.describe('The time subscriptions on the clock see'),
    status: z.enum(['ready', 'advancing']).describe('advancing while due work runs after an advance'),
    name: z.string().nullable(),
    created_at: timestamp,
    livemode: z.literal(false),
  })
  .meta({ id: 'TestClock' });
export type TestClock = z.infer<typeof TestClock>;

export const CreateTestClockBody = z
  .strictObject({
    frozen_time: inputTime,
    name: z.string().trim().min(1).max(255).optional(),
  })
  .meta({ id: 'CreateTestClockBody' });
export type CreateTestClockBody = z.infer<typeof CreateTestClockBody>;

export const AdvanceTestClockBody = z
  .strictObject({ frozen_time: inputTime.describe('Later than the clock’s frozen_time') })
  .meta({ id: 'AdvanceTestClockBody' });
export type AdvanceTestClockBody = z.infer<typeof AdvanceTestClockBody>;

export const TestClockList = cursorListEnvelope(TestClock).meta({ id: 'TestClockList' });
export const ListTestClocksQuery = z.object({
  limit: limitParam(20),
  starting_after: startingAfterParam('test clock'),
});

export const TestClockIdParams = z
  .object({ id: idText().describe('Test clock id, prefix clock_') })
  .meta({ id: 'TestClockIdParams' });

export function registerTestClockRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const common = { tags: ['Test clocks'], security: ['secretKey' as const] };
  const sandboxOnly = error('bad_request: test clocks exist in Sandbox only; or a bad parameter');
  const unauthorized = error('unauthorized: a Secret Key is needed');
  const absent = error('not_found: no such test clock');
  return registry
    .route({
      method: 'post',
      path: '/test_clocks',
      summary: 'Create a test clock (Sandbox)',
      ...common,
      body: CreateTestClockBody,
      responses: {
        201: { description: 'The clock, ready', schema: TestClock },
        400: sandboxOnly,
        401: unauthorized,
        422: error('validation_error: the body'),
      },
    })
    .route({
      method: 'get',
      path: '/test_clocks',
      summary: 'List test clocks, newest first (Sandbox)',
      ...common,
      query: ListTestClocksQuery,
      responses: {
        200: { description: 'A page of test clocks', schema: TestClockList },
        400: error('bad_request: test clocks exist in Sandbox only; or a bad parameter (unknown_cursor)'),
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/test_clocks/{id}',
      summary: 'Retrieve a test clock',
      ...common,
      params: TestClockIdParams,
      responses: {
        200: { description: 'The clock', schema: TestClock },
        400: invalidParametersResponse,
        401: unauthorized,
        404: absent,
      },
    })
    .route({
      method: 'delete',
      path: '/test_clocks/{id}',
      summary: 'Delete a test clock; its subscriptions stop moving',
      ...common,
      params: TestClockIdParams,
      responses: {
        200: {
          description: 'Deleted',
          schema: z.object({ id: z.string(), object: z.literal('test_clock'), deleted: z.literal(true) }),
        },
        400: invalidParametersResponse,
        401: unauthorized,
        404: absent,
      },
    })
    .route({
      method: 'post',
      path: '/test_clocks/{id}/advance',
      summary: 'Move a test clock forward and run what falls due on it, in order',
      ...common,
      params: TestClockIdParams,
      body: AdvanceTestClockBody,
      responses: {
        200: { description: 'The clock, advancing until the due work is done, then ready', schema: TestClock },
        400: sandboxOnly,
        401: unauthorized,
        404: absent,
        409: error('conflict: the clock is advancing already'),
        422: error('validation_error: frozen_time must be later than the clock’s'),
      },
    });
}
