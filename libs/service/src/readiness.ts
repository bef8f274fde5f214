import type { Logger } from 'pino';

/** Resolves when the dependency is usable; throws (or rejects) when it is not. */
export type ReadinessCheck = () => Promise<void> | void;

export type ReadinessResult =
  | { ready: true }
  | { ready: false; reason: 'shutting_down' }
  | { ready: false; reason: 'checks_failed'; failed: string[] };

export const DEFAULT_READINESS_TIMEOUT_MS = 2_000;

/**
 * The service's readiness: its checks plus the shutdown flag that `startService` raises, so
 * a load balancer stops routing here before the listener closes.
 */
export class Readiness {
  #shuttingDown = false;

  constructor(
    private readonly checks: readonly ReadinessCheck[],
    private readonly logger: Logger,
    private readonly timeoutMs: number = DEFAULT_READINESS_TIMEOUT_MS,
  ) {}

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  markShuttingDown(): void {
    this.#shuttingDown = true;
  }

  async evaluate(): Promise<ReadinessResult> {
    if (this.#shuttingDown) return { ready: false, reason: 'shutting_down' };
    const outcomes = await Promise.all(
      this.checks.map(async (check, index) => {
        const name = check.name || `check_${index}`;
        try {
          await withTimeout(Promise.resolve().then(check), this.timeoutMs, name);
          return undefined;
        } catch (err) {
          this.logger.warn({ err, check: name }, 'readiness check failed');
          return name;
        }
      }),
    );
    // Shutdown may have begun while the checks ran; it wins.
    if (this.#shuttingDown) return { ready: false, reason: 'shutting_down' };
    const failed = outcomes.filter((name): name is string => name !== undefined);
    return failed.length === 0 ? { ready: true } : { ready: false, reason: 'checks_failed', failed };
  }
}

/** A hung dependency must fail the probe, not hang it. */
async function withTimeout(work: Promise<void>, ms: number, name: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`readiness check ${name} timed out after ${ms}ms`)), ms);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
