import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLIC_EVENT_TYPES, type PublicEventType } from '../events/public-events';
import { webhookEventSchema } from './webhooks';

const page = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'webhooks.md'), 'utf8');
const section = page.slice(page.indexOf('### Examples'), page.indexOf('\n## ', page.indexOf('### Examples')));

/** Every JSON example of the page's Examples section that is a webhook event (it names a `type`). */
const examples = [...section.matchAll(/```json\n([\s\S]*?)\n```/g)]
  .map((block) => JSON.parse(block[1]!) as { type?: string })
  .filter((example): example is { type: PublicEventType } => typeof example.type === 'string');

describe("docs/webhooks.md's examples", () => {
  it('show several event types', () => {
    expect(examples.map((example) => example.type)).toEqual(
      expect.arrayContaining(['checkout.completed', 'invoice.paid', 'subscription.activated']),
    );
  });

  it.each(examples.map((example) => [example.type, example] as const))(
    '%s is the payload sent: every field the schema has, none it has not',
    (type, example) => {
      expect(PUBLIC_EVENT_TYPES).toContain(type);
      // Parsing drops unknown fields and fails on missing or mistyped ones.
      expect(webhookEventSchema(type).parse(example)).toEqual(example);
    },
  );
});
