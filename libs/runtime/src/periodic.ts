/**
 * Runs `task` every `intervalMs`, one run at a time: a tick that comes while a run is under way
 * is dropped, not queued, so a run slower than the interval delays the next one and nothing piles
 * up behind it (a queue would grow without end on a slow machine, and a stop would wait for all
 * of it). A failing run is left to the task to log. The timer does not keep the process alive.
 * The returned stop waits for the run in progress only.
 */
export function startPeriodic(task: () => Promise<unknown>, intervalMs: number): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = Promise.resolve()
      .then(task)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
