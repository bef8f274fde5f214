import { type Environment, type KeyKind, newId } from '@billing/contracts';
import { type EventStore, handleCommand } from '@billing/eventstore';
import { type IssuedKey, issueAllKeys, issueKey } from './api-keys';
import { decideOrganization, type OrganizationCommand } from './decide';
import {
  type ApiKeyRecord,
  ORGANIZATION_SNAPSHOT_VERSION,
  type OrganizationSettings,
  evolveOrganization,
  initialOrganization,
  organizationStream,
} from './organization';
import { projectOrganization } from './read-model';

const aggregate = {
  initialState: initialOrganization,
  evolve: evolveOrganization,
  decide: decideOrganization,
  snapshotVersion: ORGANIZATION_SNAPSHOT_VERSION,
};
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
    /** Called after keys change, so cached authentications of revoked keys are dropped. */
    private readonly onKeysChanged: () => void = () => undefined,
    /** Called after settings change, so cached allow-lists are dropped. */
    private readonly onSettingsChanged: () => void = () => undefined,
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
    this.onKeysChanged();
    return key;
  }

  async updateSettings(
    organizationId: string,
    changes: Partial<OrganizationSettings> & { name?: string },
  ): Promise<void> {
    await this.handle(organizationId, { type: 'UpdateSettings', changes, now: this.now() });
    this.onSettingsChanged();
  }

  private async handle(organizationId: string, command: OrganizationCommand): Promise<void> {
    const schema = this.store.tables.schema;
    await handleCommand(this.store, organizationStream(organizationId), aggregate, command, {
      organization: organizationId,
      // Organizations span both environments; their stream is filed under SANDBOX.
      environment: 'SANDBOX',
      occurredAt: command.now,
      project: (tx, events) => projectOrganization(tx, schema, events),
    });
  }
}
