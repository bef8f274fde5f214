import type { Express } from 'express';
import { type Platform, startPlatform } from '../src/platform';

type RouteLayer = { route?: { path: string | string[]; methods: Record<string, boolean> } };

/** `GET /admin/v1/openapi.json` documents every route the gateway registers under /admin/v1, and only those. */
describe('admin OpenAPI document', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await startPlatform();
  });
  afterAll(() => platform.stop());

  const registeredAdminRoutes = () => {
    const app = platform.gateway.service.app as Express & { router: { stack: RouteLayer[] } };
    const routes = new Set<string>();
    for (const layer of app.router.stack) {
      if (!layer.route) continue;
      for (const path of [layer.route.path].flat()) {
        if (!path.startsWith('/admin/v1/')) continue;
        const documented = path.slice('/admin/v1'.length).replace(/:(\w+)/g, '{$1}');
        for (const method of Object.keys(layer.route.methods)) routes.add(`${method.toUpperCase()} ${documented}`);
      }
    }
    return routes;
  };

  it('is served without a token, as OpenAPI 3.1 with the admin token scheme', async () => {
    const response = await fetch(`${platform.gatewayUrl}/admin/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    expect(document).toMatchObject({
      openapi: '3.1.0',
      servers: [{ url: '/admin/v1' }],
      components: { securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
    });
    expect(
      document.paths['/organizations/{org_id}/events'].get.responses['200'].content['application/json'].schema,
    ).toEqual({ $ref: '#/components/schemas/RecordHistory' });
    expect(document.components.schemas.Metrics).toBeDefined();
  });

  it('lists every route registered under /admin/v1, and nothing else', async () => {
    const document = (await (await fetch(`${platform.gatewayUrl}/admin/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    const registered = registeredAdminRoutes();
    expect(registered.size).toBeGreaterThan(25);
    expect([...registered].filter((route) => !documented.has(route))).toEqual([]);
    expect([...documented].filter((route) => !registered.has(route))).toEqual([]);
  });
});
