import type { Express } from 'express';
import { ApiError } from '@billing/contracts';
import type { Readiness } from './readiness';

/**
 * `/healthz` answers while the process can serve HTTP at all (liveness); `/readyz` answers
 * 200 only when every dependency check passes and shutdown has not begun.
 */
export function mountHealthRoutes(app: Express, readiness: Readiness): void {
  app.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    const result = await readiness.evaluate();
    if (result.ready) {
      res.json({ status: 'ready' });
      return;
    }
    if (result.reason === 'shutting_down') {
      throw ApiError.of('service_unavailable', 'Service is shutting down');
    }
    // Only the names of the failing checks: their errors may describe internals and go to the log.
    throw ApiError.of(
      'service_unavailable',
      'Service is not ready',
      result.failed.map((check) => ({ check })),
    );
  });
}
