import { type Database, migrateSchema, pgliteDatabase, postgresDatabase, quoteIdentifier } from '@billing/eventstore';
import { describeWithServer, uniqueName } from '@billing/testing';
import { SqlModelAdapter, destroyClientModels, sqlAdapterFactory } from '../src/oauth/adapter';
import { findApp, registerApp } from '../src/oauth/apps';
import { loadServerSecrets } from '../src/oauth/server-secrets';
import { oauthDdl } from '../src/oauth/tables';

/** The authorization server's storage, as oidc-provider uses it, on either database. */
function itStoresOAuthModels(open: () => Promise<{ database: Database; schema: string }>) {
  let database: Database;
  let schema: string;
  const now = new Date('2026-11-28T12:00:00Z');
  const clock = { at: now };

  beforeAll(async () => {
    ({ database, schema } = await open());
    await migrateSchema(database, schema, `CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await migrateSchema(database, schema, oauthDdl(schema));
  });
  afterAll(() => database.close());

  const adapter = (model: string) => new SqlModelAdapter(model, database, schema, () => clock.at);

  it('keeps a model until it expires, and finds it by id and uid', async () => {
    clock.at = now;
    await adapter('Interaction').upsert('int_1', { uid: 'uid_1', returnTo: '/x' }, 60);
    expect(await adapter('Interaction').find('int_1')).toEqual({ uid: 'uid_1', returnTo: '/x' });
    expect(await adapter('Interaction').findByUid('uid_1')).toEqual({ uid: 'uid_1', returnTo: '/x' });
    expect(await adapter('Session').find('int_1')).toBeUndefined();
    clock.at = new Date(now.getTime() + 61_000);
    expect(await adapter('Interaction').find('int_1')).toBeUndefined();
  });

  it('replaces a model on upsert and marks it consumed', async () => {
    clock.at = now;
    await adapter('AuthorizationCode').upsert('code_1', { grantId: 'g1', clientId: 'app_1' }, 60);
    await adapter('AuthorizationCode').upsert('code_1', { grantId: 'g1', clientId: 'app_1', scope: 'openid' }, 60);
    await adapter('AuthorizationCode').consume('code_1');
    const found = await adapter('AuthorizationCode').find('code_1');
    expect(found).toMatchObject({ grantId: 'g1', scope: 'openid' });
    expect(found!.consumed).toBe(Math.floor(now.getTime() / 1000));
    await adapter('AuthorizationCode').destroy('code_1');
    expect(await adapter('AuthorizationCode').find('code_1')).toBeUndefined();
  });

  it('revokes every model of a grant, the grant with them, and no other', async () => {
    clock.at = now;
    await adapter('Grant').upsert('g2', { clientId: 'app_2', accountId: 'usr_1' }, 600);
    await adapter('AccessToken').upsert('at_2', { grantId: 'g2', clientId: 'app_2' }, 600);
    await adapter('RefreshToken').upsert('rt_2', { grantId: 'g2', clientId: 'app_2' }, 600);
    await adapter('AccessToken').upsert('at_3', { grantId: 'g3', clientId: 'app_2' }, 600);
    await adapter('AccessToken').revokeByGrantId('g2');
    expect(await adapter('AccessToken').find('at_2')).toBeUndefined();
    expect(await adapter('RefreshToken').find('rt_2')).toBeUndefined();
    expect(await adapter('Grant').find('g2')).toBeUndefined();
    expect(await adapter('AccessToken').find('at_3')).toBeDefined();
  });

  it("removes an app's tokens and grants when it is deleted, and serves registered apps as clients", async () => {
    const { app } = await registerApp(
      database,
      schema,
      { organization: 'org_1', environment: 'SANDBOX', name: 'Books', redirectUris: ['https://books.example/cb'] },
      now,
    );
    const clients = sqlAdapterFactory(database, schema)('Client');
    expect(await clients.find(app.client_id)).toMatchObject({
      client_id: app.client_id,
      redirect_uris: ['https://books.example/cb'],
      organization_id: 'org_1',
      environment: 'SANDBOX',
    });
    expect(await clients.find('app_unknown')).toBeUndefined();
    await adapter('Grant').upsert('g4', { clientId: app.client_id }, 600);
    await adapter('AccessToken').upsert('at_4', { grantId: 'g4', clientId: app.client_id }, 600);
    await destroyClientModels(database, schema, app.client_id);
    expect(await adapter('AccessToken').find('at_4')).toBeUndefined();
    expect(await adapter('Grant').find('g4')).toBeUndefined();
    expect(await findApp(database, schema, app.client_id)).toBeDefined();
  });

  it('makes the signing and cookie keys once and gives every caller the same ones', async () => {
    const [first, second] = await Promise.all([
      loadServerSecrets(database, schema, now),
      loadServerSecrets(database, schema, now),
    ]);
    expect(second).toEqual(first);
    expect(await loadServerSecrets(database, schema, now)).toEqual(first);
    expect(first.jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(first.jwks.keys[0]!.d).toBeDefined();
    expect(first.cookieKeys[0]!.length).toBeGreaterThanOrEqual(32);
  });
}

describeWithServer('DATABASE_URL', 'OAuth storage on PostgreSQL', (url) => {
  itStoresOAuthModels(async () => ({
    database: postgresDatabase(url),
    schema: quoteIdentifier(uniqueName('oauth')),
  }));
});

describe('OAuth storage on PGlite', () => {
  itStoresOAuthModels(async () => ({ database: await pgliteDatabase(), schema: 'gateway' }));
});
