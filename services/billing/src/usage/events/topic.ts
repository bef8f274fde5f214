import { RefusedMessage, type Subscription, type ValueRefused } from '@billing/bus';
import { ApiError, USAGE_TOPIC, UsageTopicMessage } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { takeUsage } from './intake';

/**
 * Whether billing reads the usage topic: `BILLING_USAGE_TOPIC=on` (default off). Off unless an
 * operator turns it on, as the topic trusts whoever can write to it (docs/usage.md).
 */
export function readsUsageTopic(config: ServiceContext['config']): boolean {
  const setting = config.BILLING_USAGE_TOPIC ?? 'off';
  if (setting !== 'on' && setting !== 'off') throw new Error('BILLING_USAGE_TOPIC must be on or off');
  return setting === 'on';
}

/**
 * The usage topic's consumer (docs/usage.md, Kafka): each message's events are taken as a report
 * through the API is, in one statement. A message that is malformed or names what is not there
 * is parked on `usage.events.dlq` with the reason; a repeat stores nothing again (ids).
 */
export async function startUsageTopicConsumer(context: ServiceContext, onCreditsToSpend: () => void) {
  const groupId = `${context.store.tables.schema.replaceAll('"', '')}-usage`;
  const subscription: Subscription = await context.infrastructure.bus.subscribe<UsageTopicMessage>({
    groupId,
    topics: [USAGE_TOPIC],
    readValue: readUsageMessage,
    handler: async ({ value }) => {
      const tenant = {
        organization: value.organization,
        environment: value.livemode ? ('PRODUCTION' as const) : ('SANDBOX' as const),
      };
      try {
        const intake = await takeUsage(context, tenant, value.events, (i) => `events.${i}.`);
        if (intake.spendsCredits) onCreditsToSpend();
      } catch (error) {
        if (error instanceof ApiError && error.status < 500) throw new RefusedMessage(refusalOf(error));
        throw error;
      }
    },
  });
  return () => subscription.stop();
}

function readUsageMessage(json: unknown): UsageTopicMessage | ValueRefused {
  const result = UsageTopicMessage.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  return { refused: `not a usage message (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})` };
}

/** The refusal as the API would give it: its code and the event's field. */
function refusalOf(error: ApiError): string {
  const detail = error.details?.[0] as { path?: string; code?: string } | undefined;
  return `${detail?.code ?? error.code} at ${detail?.path ?? 'the message'}: ${error.message}`;
}
