import { Agent } from 'node:http';
import { gate, http, sleep, until } from '../test/http';
import { createApp, createLogger, exitOnSignals, startService, type ShutdownReport } from './index';

const logger = createLogger('shutdown-test', { level: 'silent' });

/** `/slow` answers once `slowGate` opens. */
function slowApp(events: string[], readyGate?: Promise<void>, slowGate?: Promise<void>) {
  return createApp({
    name: 'slow',
    logger,
    readiness: [
      async function gated() {
        events.push('readyz:checking');
        await readyGate;
      },
    ],
    routes: (app) => {
      app.get('/slow', async (_req, res) => {
        events.push('slow:started');
        res.on('finish', () => events.push('slow:finished'));
        await slowGate;
        res.json({ done: true });
      });
      app.get('/fast', (_req, res) => {
        res.json({ fast: true });
      });
    },
  });
}

describe('graceful shutdown', () => {
  it('drains in-flight requests, refuses new connections, reports not-ready, then runs closers in order', async () => {
    const events: string[] = [];
    const ready = gate();
    // Held until the drain has begun: a loaded machine once took longer than a fixed 300 ms to
    // start the shutdown, and the answer left before it, kept alive.
    const slowAnswer = gate();
    const app = slowApp(events, ready.promise, slowAnswer.promise);
    const handle = await startService({
      app,
      port: 0,
      logger,
      shutdownTimeoutMs: 5_000,
      onShutdown: [
        {
          name: 'consumers',
          close: async () => {
            await sleep(10);
            events.push('close:consumers');
          },
        },
        function failing() {
          events.push('close:failing');
          throw new Error('already closed');
        },
        async () => {
          events.push('close:pool');
        },
      ],
    });
    const keepAlive = new Agent({ keepAlive: true });
    try {
      const slow = http(`${handle.url}/slow`, { agent: keepAlive });
      await until(() => events.includes('slow:started'));
      // A probe already on the wire when shutdown begins: its check is still running.
      const readyz = http(`${handle.url}/readyz`, { agent: keepAlive });
      await until(() => events.includes('readyz:checking'));

      const started = Date.now();
      const shutdown = handle.shutdown();
      expect(handle.shutdown()).toBe(shutdown);
      expect(app.readiness.shuttingDown).toBe(true);
      await expect(app.readiness.evaluate()).resolves.toEqual({ ready: false, reason: 'shutting_down' });

      await expect(http(`${handle.url}/fast`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

      ready.open();
      slowAnswer.open();
      const probe = await readyz;
      expect(probe.status).toBe(503);
      expect(probe.body).toEqual({ error: { code: 'service_unavailable', message: 'Service is shutting down' } });
      expect(probe.headers.connection).toBe('close');

      const answered = await slow;
      expect(answered.status).toBe(200);
      expect(answered.body).toEqual({ done: true });
      // Asked to close its keep-alive connection, so the drain does not wait for the idle timeout.
      expect(answered.headers.connection).toBe('close');

      const report: ShutdownReport = await shutdown;
      expect(report).toEqual({ forced: false, failedClosers: ['failing'] });
      expect(events.slice(events.indexOf('slow:finished'))).toEqual([
        'slow:finished',
        'close:consumers',
        'close:failing',
        'close:pool',
      ]);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(handle.server.listening).toBe(false);
    } finally {
      ready.open();
      slowAnswer.open();
      keepAlive.destroy();
    }
  });

  it('does not wait for idle keep-alive connections', async () => {
    const handle = await startService({ app: slowApp([]), port: 0, logger, shutdownTimeoutMs: 10_000 });
    const keepAlive = new Agent({ keepAlive: true });
    try {
      expect((await http(`${handle.url}/fast`, { agent: keepAlive })).status).toBe(200);
      const started = Date.now();
      await expect(handle.shutdown()).resolves.toEqual({ forced: false, failedClosers: [] });
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      keepAlive.destroy();
    }
  });

  it('cuts connections still busy at the timeout, then still runs the closers', async () => {
    const release = gate();
    const arrived = gate();
    const closed: string[] = [];
    const app = createApp({
      name: 'stuck',
      logger,
      routes: (router) => {
        router.get('/stuck', async (_req, res) => {
          arrived.open();
          await release.promise;
          res.json({});
        });
      },
    });
    const handle = await startService({
      app,
      port: 0,
      logger,
      shutdownTimeoutMs: 100,
      onShutdown: [() => void closed.push('pool')],
    });
    try {
      const stuck = http(`${handle.url}/stuck`);
      stuck.catch(() => undefined);
      // The request must be in the server before the shutdown starts: a fixed 20 ms sleep was
      // not enough under load, and the shutdown then found nothing to cut.
      await arrived.promise;
      await expect(handle.shutdown()).resolves.toEqual({ forced: true, failedClosers: [] });
      await expect(stuck).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(closed).toEqual(['pool']);
    } finally {
      release.open();
    }
  });

  it('rejects when the port is taken', async () => {
    const first = await startService({ app: slowApp([]), port: 0, logger });
    try {
      await expect(startService({ app: slowApp([]), port: first.port, logger })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
    } finally {
      await first.shutdown();
    }
  });
});

describe('exitOnSignals', () => {
  const clean: ShutdownReport = { forced: false, failedClosers: [] };

  it('shuts down on SIGTERM and exits 0 after a clean drain', async () => {
    const shutdown = jest.fn(async () => clean);
    const exit = jest.fn();
    const dispose = exitOnSignals({ shutdown }, logger, { exit });
    try {
      process.emit('SIGTERM', 'SIGTERM');
      await until(() => exit.mock.calls.length > 0);
      expect(shutdown).toHaveBeenCalledTimes(1);
      expect(exit).toHaveBeenCalledWith(0);
    } finally {
      dispose();
    }
  });

  it('exits 1 when a closer failed', async () => {
    const exit = jest.fn();
    const dispose = exitOnSignals({ shutdown: async () => ({ forced: false, failedClosers: ['pool'] }) }, logger, {
      exit,
    });
    try {
      process.emit('SIGINT', 'SIGINT');
      await until(() => exit.mock.calls.length > 0);
      expect(exit).toHaveBeenCalledWith(1);
    } finally {
      dispose();
    }
  });

  it('exits 1 at once on a second signal while draining', async () => {
    const drained = gate();
    const shutdown = jest.fn(async () => {
      await drained.promise;
      return clean;
    });
    const exit = jest.fn();
    const dispose = exitOnSignals({ shutdown }, logger, { exit });
    try {
      process.emit('SIGTERM', 'SIGTERM');
      process.emit('SIGINT', 'SIGINT');
      expect(exit).toHaveBeenCalledWith(1);
      expect(shutdown).toHaveBeenCalledTimes(1);
    } finally {
      drained.open();
      dispose();
    }
  });
});
