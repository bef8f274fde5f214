import { EventRelay } from '@billing/bus';
import { MIN_INTERNAL_SECRET_LENGTH } from '@billing/signing';
import { EventStore } from '@billing/eventstore';
import {
  type Closer,
  type Logger,
  type ServiceApp,
  type ServiceHandle,
  createApp,
  createLogger,
  startService,
} from '@billing/service';
import type { Infrastructure } from './infrastructure';
import { actOnBehalfOfCaller, mountRecordHistory } from './record-history';

/** What a service needs while it handles requests and events. */
export interface ServiceContext {
  name: string;
  store: EventStore;
  /** The one clock of the service; every time-dependent rule reads it. */
  now: () => Date;
  infrastructure: Infrastructure;
  logger: Logger;
  config: Record<string, string | undefined>;
  /** Signs calls to other services and checks calls to this one (`docs/decisions/0007-internal-trust-and-secrets-in-logs.md`). */
  internalSecret: string;
}

/** A service as its package describes it; `runService` does the wiring. */
export interface ServiceDefinition {
  /** Also its PostgreSQL schema and its topic `<name>.events`. */
  name: string;
  defaultPort: number;
  /** Internal event type -> public dotted type (`libs/contracts/src/events/public-events.ts`) for its relay. */
  publicEvents?: Readonly<Record<string, string>>;
  /** Internal event type -> a topic other than `<name>.events` that its events go to. */
  eventTopics?: Readonly<Record<string, string>>;
  routes?: (app: ServiceApp, context: ServiceContext) => void;
  /** False for a proxy: bodies reach its routes unread (default true: JSON is parsed). */
  parseJsonBodies?: boolean;
  /** Paths whose JSON bodies may be larger than the default 100kb (path -> limit). */
  largeBodies?: Readonly<Record<string, string>>;
  /**
   * True for the gateway alone: it faces the network and authenticates callers itself. Every
   * other service answers only calls signed with the internal secret.
   */
  facesNetwork?: boolean;
  /** Consumers and other background work; each returns how to stop it. */
  start?: (context: ServiceContext) => Promise<Array<() => Promise<void>>>;
}

export interface RunServiceOptions {
  port?: number;
  host?: string;
  logger?: Logger;
  /** PostgreSQL schema of the service's store; defaults to its name (tests use their own). */
  schema?: string;
  /** Injected clock; defaults to the system clock. */
  now?: () => Date;
  /** Service-specific settings, such as upstream URLs for the gateway. */
  config?: Record<string, string | undefined>;
  /** The secret shared by the gateway and the services; defaults to `config.INTERNAL_SECRET`. */
  internalSecret?: string;
}

export interface RunningService extends ServiceHandle {
  name: string;
  context: ServiceContext;
}

export const topicOf = (service: string) => `${service}.events`;

/**
 * Migrates the service's event store, relays its log to `<name>.events`, starts its consumers
 * and its HTTP server. Shutdown drains HTTP, then stops consumers and the relay, in that order.
 * The infrastructure belongs to the caller, which may share it between services.
 */
export async function runService(
  definition: ServiceDefinition,
  infrastructure: Infrastructure,
  options: RunServiceOptions = {},
): Promise<RunningService> {
  const config = options.config ?? {};
  const internalSecret = options.internalSecret ?? config.INTERNAL_SECRET;
  if (!internalSecret || internalSecret.length < MIN_INTERNAL_SECRET_LENGTH) {
    throw new Error(
      `INTERNAL_SECRET (at least ${MIN_INTERNAL_SECRET_LENGTH} characters, the same for the gateway and every service) is required: services answer only calls signed with it`,
    );
  }
  const logger = options.logger ?? createLogger(definition.name);
  const store = new EventStore(infrastructure.database, { schema: options.schema ?? definition.name });
  await store.migrate();
  const context: ServiceContext = {
    name: definition.name,
    store,
    infrastructure,
    logger,
    now: options.now ?? (() => new Date()),
    config,
    internalSecret,
  };

  const relay = new EventRelay(store, infrastructure.bus, {
    topic: topicOf(definition.name),
    publicTypes: definition.publicEvents,
    topicsByType: definition.eventTopics,
    onError: (err) => logger.error({ err }, 'relay failed; retrying'),
  });
  relay.start();
  const stoppers = (await definition.start?.(context)) ?? [];

  const app = createApp({
    name: definition.name,
    parseJsonBodies: definition.parseJsonBodies,
    largeBodies: definition.largeBodies,
    internalAuth: definition.facesNetwork ? undefined : { secret: internalSecret },
    logger,
    readiness: [
      async function database() {
        await infrastructure.database.query('SELECT 1');
      },
    ],
    routes: (express) => {
      if (!definition.facesNetwork) {
        express.use(actOnBehalfOfCaller);
        mountRecordHistory(express, definition.name, store);
      }
      definition.routes?.(express, context);
    },
  });
  const closers: Closer[] = [
    ...stoppers.map((stop, i) => ({ name: `consumer_${i}`, close: stop })),
    { name: 'relay', close: () => relay.stop() },
  ];
  const handle = await startService({
    app,
    logger,
    port: options.port ?? definition.defaultPort,
    host: options.host,
    onShutdown: closers,
  });
  return { ...handle, name: definition.name, context };
}
