/**
 * Runs `task` every `intervalMs`, one run at a time (a slow run delays the next instead of
 * overlapping it); a failing run is left to the task to log. The timer does not keep the
 * process alive. The returned stop waits for the run in progress.
 */
export function startPeriodic(task: () => Promise<unknown>, intervalMs: number): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(task).catch(() => {});
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
