import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { type LogFormat, logFormat, prettyDestination } from './pretty-log';
import { redactError, redactText, redactValue } from './redact';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  /** Overrides LOG_LEVEL; tests pass 'silent'. */
  level?: string;
  /** Where JSON lines go; stdout when absent. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /** Overrides LOG_FORMAT; by default pretty on a terminal stdout, JSON otherwise (./pretty-log). */
  format?: LogFormat;
}

/**
 * A pino logger named after the service, level from LOG_LEVEL (default `info`), JSON lines or
 * pretty ones (LOG_FORMAT). Every line goes through `./redact` first: no secret, hash, card
 * number, personal data or database parameter reaches it, whatever a caller logs.
 */
export function createLogger(name: string, options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    name,
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: redactError, error: redactError },
    formatters: {
      // Level names rather than pino's numbers, so log aggregators and humans read them directly.
      level: (label) => ({ level: label }),
      log: (object) => redactValue(object) as Record<string, unknown>,
      bindings: (bindings) => redactValue(bindings) as Record<string, unknown>,
    },
    hooks: {
      // Messages too: `logger.error(err)` makes the error's own message the line's `msg`.
      logMethod(args, method) {
        const [first, ...rest] = args as unknown[];
        if (first instanceof Error && typeof rest[0] !== 'string') {
          const { message } = redactError(first) as { message: string };
          return method.apply(this, [{ err: first }, message, ...rest] as never);
        }
        const scrubbed = args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg));
        return method.apply(this, scrubbed as never);
      },
    },
  };
  // A caller's own destination (tests, benches) gets JSON unless it asks otherwise.
  const format = options.format ?? (options.destination ? 'json' : logFormat());
  if (format === 'pretty') return pino(config, prettyDestination(options.destination ?? process.stdout));
  return options.destination ? pino(config, options.destination) : pino(config);
}
