import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ServiceApp } from './app';
import { answerProtocolErrorsInEnvelope } from './protocol-errors';

/** Something to release on shutdown; a named one reads better in the logs. */
export type Closer = (() => unknown) | { name: string; close: () => unknown };

export interface StartServiceOptions {
  app: ServiceApp;
  /** 0 picks a free port; the handle reports the real one. */
  port: number;
  host?: string;
  logger: Logger;
  /** Run in this order after the HTTP server has drained: stop consumers, then close pools. */
  onShutdown?: readonly Closer[];
  /** How long in-flight requests may take to finish before their connections are cut. */
  shutdownTimeoutMs?: number;
}

export interface ShutdownReport {
  /** True when requests outlived the timeout and their connections were closed. */
  forced: boolean;
  /** Names of the closers that threw. */
  failedClosers: string[];
}

export interface ServiceHandle {
  url: string;
  port: number;
  host: string;
  server: Server;
  /** The express app behind the server (its lane, if any, answers some requests first). */
  app: ServiceApp;
  /** Idempotent: every call returns the same drain. */
  shutdown(): Promise<ShutdownReport>;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/**
 * How long a service keeps an idle keep-alive connection open. Longer than the gateway keeps an
 * idle pooled socket (its upstreams' free-socket timeout, half of this), so that the gateway
 * closes first and never reuses a socket the service is closing.
 */
export const SERVICE_KEEP_ALIVE_TIMEOUT_MS = 10_000;
/** Responses that finish during the drain leave idle keep-alive sockets that must be swept. */
const IDLE_SWEEP_MS = 50;

export async function startService(options: StartServiceOptions): Promise<ServiceHandle> {
  const { app, logger, host = '127.0.0.1' } = options;
  const timeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const server = createServer();
  server.keepAliveTimeout = SERVICE_KEEP_ALIVE_TIMEOUT_MS;
  // Node's own 400, 408, 417 and 431 answers leave in the error envelope too.
  answerProtocolErrorsInEnvelope(server, logger);
  const pending = new Set<ServerResponse>();
  let draining = false;

  // Registered before the app so the header is set before any handler can send a response.
  server.on('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    pending.add(res);
    res.once('close', () => pending.delete(res));
  });
  server.on('request', app.serve);

  await listen(server, options.port, host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url, service: app.serviceName }, 'service listening');

  const drain = async (): Promise<ShutdownReport> => {
    draining = true;
    app.readiness.markShuttingDown();
    logger.info({ in_flight: pending.size }, 'shutting down: draining HTTP');
    // Tell keep-alive clients of in-flight requests to reconnect elsewhere once answered.
    for (const res of pending) if (!res.headersSent) res.setHeader('Connection', 'close');

    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const sweeper = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    let forced = false;
    const deadline = setTimeout(() => {
      forced = true;
      logger.warn({ in_flight: pending.size, timeout_ms: timeoutMs }, 'shutdown timeout: closing connections');
      server.closeAllConnections();
    }, timeoutMs);
    try {
      await closed;
    } finally {
      clearInterval(sweeper);
      clearTimeout(deadline);
    }

    const failedClosers: string[] = [];
    for (const [index, closer] of (options.onShutdown ?? []).entries()) {
      const name = closerName(closer, index);
      try {
        await (typeof closer === 'function' ? closer() : closer.close());
        logger.debug({ closer: name }, 'closed');
      } catch (err) {
        failedClosers.push(name);
        logger.error({ err, closer: name }, 'closer failed during shutdown');
      }
    }
    logger.info({ forced, failed_closers: failedClosers }, 'shutdown complete');
    return { forced, failedClosers };
  };

  let shutdownPromise: Promise<ShutdownReport> | undefined;
  return {
    url,
    port,
    host,
    server,
    app,
    shutdown: () => (shutdownPromise ??= drain()),
  };
}

function closerName(closer: Closer, index: number): string {
  if (typeof closer !== 'function') return closer.name;
  return closer.name || `closer_${index}`;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
