import type { Logger } from 'pino';
import type { ServiceHandle } from './server';

export interface ExitOnSignalsOptions {
  signals?: readonly NodeJS.Signals[];
  /** Replaced in tests; `process.exit` otherwise. */
  exit?: (code: number) => void;
  /** Last resort when a closer hangs: exit with 1 after this long. */
  forceExitAfterMs?: number;
}

/**
 * Wires SIGTERM/SIGINT to `handle.shutdown()` and exits when it completes: 0 on a clean
 * drain, 1 when a closer failed or a second signal demanded an immediate exit.
 * Returns a function that removes the listeners.
 */
export function exitOnSignals(
  handle: Pick<ServiceHandle, 'shutdown'>,
  logger: Logger,
  options: ExitOnSignalsOptions = {},
): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const forceExitAfterMs = options.forceExitAfterMs ?? 30_000;
  let received = false;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (received) {
      logger.warn({ signal }, 'second signal: exiting immediately');
      exit(1);
      return;
    }
    received = true;
    logger.info({ signal }, 'signal received: shutting down');
    const hardStop = setTimeout(() => {
      logger.error({ timeout_ms: forceExitAfterMs }, 'shutdown hung: forcing exit');
      exit(1);
    }, forceExitAfterMs);
    hardStop.unref();
    handle.shutdown().then(
      (report) => {
        clearTimeout(hardStop);
        exit(report.failedClosers.length > 0 ? 1 : 0);
      },
      (err: unknown) => {
        clearTimeout(hardStop);
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };

  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
