import { readFileSync } from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** What this consumer knows of the platform: only the AsyncAPI document (docs/asyncapi.json). */
interface AsyncApiDocument {
  asyncapi: string;
  channels: Record<string, { address: string; messages: Record<string, { $ref: string }> }>;
  components: { messages: Record<string, { payload: { schemaFormat: string; schema: object } }> };
}

export interface ValidationResult {
  /** The message's event type, from the CloudEvents `ce_type` header (or the value's `type`). */
  type: string;
  /** False when the type is not in the document for this topic: skip it, it may be newer than us. */
  known: boolean;
  valid: boolean;
  errors: string[];
}

/**
 * One ajv validator per message of each channel, from the JSON Schema (draft-07) that the
 * document gives as the message payload.
 */
export class EventContract {
  private readonly validators = new Map<string, Map<string, ValidateFunction>>();

  constructor(document: AsyncApiDocument) {
    if (!document.asyncapi.startsWith('3.')) throw new Error(`AsyncAPI 3 expected, got ${document.asyncapi}`);
    // The schemas carry annotations ajv does not know (such as `id`); formats are checked.
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const channel of Object.values(document.channels)) {
      const byType = new Map<string, ValidateFunction>();
      for (const [name, reference] of Object.entries(channel.messages)) {
        const message = document.components.messages[reference.$ref.split('/').pop()!];
        if (!message) throw new Error(`${channel.address}: message ${name} is not in components.messages`);
        byType.set(name, ajv.compile(message.payload.schema));
      }
      this.validators.set(channel.address, byType);
    }
  }

  static fromFile(path: string): EventContract {
    return new EventContract(JSON.parse(readFileSync(path, 'utf8')) as AsyncApiDocument);
  }

  get topics(): string[] {
    return [...this.validators.keys()];
  }

  validate(topic: string, headers: Record<string, string>, value: unknown): ValidationResult {
    const type = headers.ce_type ?? String((value as { type?: unknown })?.type ?? '');
    const validator = this.validators.get(topic)?.get(type);
    if (!validator) return { type, known: false, valid: false, errors: [] };
    const valid = validator(value) as boolean;
    const errors = (validator.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
    return { type, known: true, valid, errors };
  }
}
