import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asyncApiDocument } from './asyncapi';
import { PUBLIC_EVENT_TYPES } from './public-events';

const committed = () =>
  JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'asyncapi.json'), 'utf8'));

describe('docs/asyncapi.json', () => {
  it('is what the generator makes from the zod schemas now (run `npm run contracts:asyncapi` after a change)', () => {
    expect(committed()).toEqual(JSON.parse(JSON.stringify(asyncApiDocument())));
  });

  it('has a message with a JSON Schema and its schema_version for every public event type', () => {
    const document = asyncApiDocument();
    for (const type of PUBLIC_EVENT_TYPES) {
      const message = document.components.messages[type] as {
        payload: { schema: { properties: Record<string, { const?: unknown }> } };
        'x-schema-version': number;
      };
      expect(message).toBeDefined();
      expect(message.payload.schema.properties.type!.const).toBe(type);
      expect(message.payload.schema.properties.schema_version!.const).toBe(message['x-schema-version']);
    }
  });

  it('lists every topic as a channel with a receive operation', () => {
    const document = asyncApiDocument();
    expect(document.asyncapi).toBe('3.0.0');
    expect(Object.keys(document.channels)).toEqual(
      expect.arrayContaining([
        'catalog.events',
        'checkout.events',
        'billing.events',
        'credits.events',
        'promotions.events',
      ]),
    );
    expect(Object.keys(document.operations)).toContain('consume-checkout.events');
  });
});
