import { type Environment, type KeyKind, newId } from '@billing/contracts';
import type { EventStore } from '@billing/eventstore';
import { organizationAggregate } from './aggregate';
import { type IssuedKey, issueAllKeys, issueKey } from './api-keys';
import type { OrganizationCommand } from './decide';
import type { ApiKeyRecord, OrganizationSettings } from './organization';
import type { OrganizationChanges } from './changes';

const recordOf = (key: IssuedKey): ApiKeyRecord => ({
  key_id: key.keyId,
  environment: key.environment,
  kind: key.kind,
  hash: key.hash,
  last4: key.last4,
});

/** Organization commands: read, decide, append with the read model in the same transaction. */
export class Organizations {
  constructor(
    private readonly store: EventStore,
    private readonly now: () => Date,
    /** Tells every gateway that keys or settings changed, so that their caches drop them at once. */
    private readonly changes?: OrganizationChanges,
  ) {}

  async create(name: string): Promise<{ id: string; name: string; keys: IssuedKey[] }> {
    const id = newId('organization');
    const keys = issueAllKeys();
    await this.handle(id, {
      type: 'CreateOrganization',
      organizationId: id,
      name,
      keys: keys.map(recordOf),
      now: this.now(),
    });
    return { id, name, keys };
  }

  async rollKey(organizationId: string, environment: Environment, kind: KeyKind): Promise<IssuedKey> {
    const key = issueKey(environment, kind);
    await this.handle(organizationId, {
      type: 'RollApiKey',
      environment,
      kind,
      newKey: recordOf(key),
      now: this.now(),
    });
    return key;
  }

  async updateSettings(
    organizationId: string,
    changes: Partial<OrganizationSettings> & { name?: string },
  ): Promise<void> {
    await this.handle(organizationId, { type: 'UpdateSettings', changes, now: this.now() });
  }

  private async handle(organizationId: string, command: OrganizationCommand): Promise<void> {
    // A new organization is in no cache; any other change may be (a rolled key, new origins).
    const cached = command.type !== 'CreateOrganization' ? this.changes : undefined;
    await organizationAggregate.handle(this.store, organizationId, command, {
      organization: organizationId,
      // Organizations span both environments; their stream is filed under SANDBOX.
      environment: 'SANDBOX',
      occurredAt: command.now,
      alsoProject: cached ? (tx) => cached.notifyIn(tx) : undefined,
    });
    // A rolled key is refused by every gateway before the roll is answered.
    await cached?.afterCommit(command.type === 'RollApiKey');
  }
}
