import { CreateOAuthAppBody, OAuthAppParams, OrganizationParams, notFound } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';
import type { z } from 'zod';
import { destroyClientModels } from '../oauth/adapter';
import { appView, connectionsOf, listApps, markAppDeleted, registerApp } from '../oauth/apps';

export interface OAuthAppRoutesOptions {
  sql: SqlExecutor;
  schema: string;
  now: () => Date;
  /** 404 unless the path's organization exists. */
  organizationExists: RequestHandler;
}

/** `/admin/v1/organizations/{org}/oauth_apps`: the apps an organization connects (docs/oauth.md). */
export function mountOAuthAppRoutes(app: Express, options: OAuthAppRoutesOptions): void {
  const { sql, schema, now, organizationExists } = options;
  const apps = '/admin/v1/organizations/:org_id/oauth_apps';

  app.post(
    apps,
    validate({ params: OrganizationParams, body: CreateOAuthAppBody }),
    organizationExists,
    async (_req, res) => {
      const { org_id } = res.locals.input.params as z.infer<typeof OrganizationParams>;
      const body = res.locals.input.body as z.infer<typeof CreateOAuthAppBody>;
      const registered = await registerApp(
        sql,
        schema,
        { organization: org_id, environment: body.environment, name: body.name, redirectUris: body.redirect_uris },
        now(),
      );
      res.status(201).json({ ...appView(registered.app), client_secret: registered.clientSecret });
    },
  );

  app.get(apps, validate({ params: OrganizationParams }), organizationExists, async (_req, res) => {
    const { org_id } = res.locals.input.params as z.infer<typeof OrganizationParams>;
    const apps = await listApps(sql, schema, org_id);
    const connections = await connectionsOf(
      sql,
      schema,
      apps.map((found) => found.client_id),
    );
    res.json({ object: 'list', data: apps.map((found) => appView(found, connections.get(found.client_id))) });
  });

  app.delete(`${apps}/:client_id`, validate({ params: OAuthAppParams }), async (_req, res) => {
    const { org_id, client_id } = res.locals.input.params as z.infer<typeof OAuthAppParams>;
    if (!(await markAppDeleted(sql, schema, org_id, client_id, now()))) throw notFound('No such app');
    await destroyClientModels(sql, schema, client_id);
    res.json({ object: 'oauth_app', id: client_id, deleted: true });
  });
}
