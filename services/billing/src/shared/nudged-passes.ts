/**
 * A background worker's passes, run when nudged rather than a timer's interval later: one pass
 * at a time, and one more right after it when nudged meanwhile (however many nudges came) or
 * when the pass answers `true` (it left work behind). A failed pass is reported to `onError`;
 * the next nudge runs again. `drain`, at shutdown: no pass starts any more, and the one running
 * ends first.
 */
export function nudgedPasses(
  pass: () => Promise<boolean | void>,
  onError: (err: unknown) => void,
): { nudge: () => void; drain: () => Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const nudge = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .then((more) => {
        if (more === true) again = true;
      })
      .catch(onError)
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          nudge();
        }
      });
  };
  const drain = async () => {
    stopped = true;
    while (running) await running;
  };
  return { nudge, drain };
}
