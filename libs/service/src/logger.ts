import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  /** Overrides LOG_LEVEL; tests pass 'silent'. */
  level?: string;
  /** Where JSON lines go; stdout when absent. Tests pass a capturing stream. */
  destination?: DestinationStream;
}

/** A pino JSON logger named after the service, level from LOG_LEVEL (default `info`). */
export function createLogger(name: string, options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    name,
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names rather than pino's numbers, so log aggregators and humans read them directly.
    formatters: { level: (label) => ({ level: label }) },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
