/** The authorization server's tables in the gateway's schema (docs/decisions/0025-oauth-provider.md). */
export function oauthTables(schema: string) {
  return {
    apps: `${schema}.oauth_apps`,
    models: `${schema}.oauth_models`,
    secrets: `${schema}.oauth_server_secrets`,
  };
}

export function oauthDdl(schema: string): string {
  const t = oauthTables(schema);
  return `
    CREATE TABLE IF NOT EXISTS ${t.apps} (
      client_id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      name text NOT NULL,
      redirect_uris jsonb NOT NULL,
      secret_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE INDEX IF NOT EXISTS oauth_apps_by_organization ON ${t.apps} (organization_id, created_at);
    CREATE TABLE IF NOT EXISTS ${t.models} (
      model text NOT NULL,
      id text NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      client_id text,
      uid text,
      user_code text,
      expires_at timestamptz,
      consumed_at timestamptz,
      PRIMARY KEY (model, id)
    );
    CREATE INDEX IF NOT EXISTS oauth_models_by_grant ON ${t.models} (grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_models_by_client ON ${t.models} (client_id) WHERE client_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_models_by_uid ON ${t.models} (uid) WHERE uid IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_models_expiring ON ${t.models} (expires_at) WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS ${t.secrets} (
      name text PRIMARY KEY,
      value jsonb NOT NULL,
      created_at timestamptz NOT NULL
    );
  `;
}
