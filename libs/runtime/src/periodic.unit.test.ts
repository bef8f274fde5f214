import { startPeriodic } from './periodic';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean) {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 10_000) throw new Error('condition not met within 10 s');
    await sleep(5);
  }
}

describe('startPeriodic', () => {
  it('runs the task on its interval, one run at a time, and stop waits for the run in progress', async () => {
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const stop = startPeriodic(async () => {
      runs++;
      maxConcurrent = Math.max(maxConcurrent, ++concurrent);
      await sleep(30);
      concurrent--;
    }, 5);
    await until(() => runs >= 3);
    await stop();
    expect(maxConcurrent).toBe(1);
    expect(concurrent).toBe(0);
    const after = runs;
    await sleep(30);
    expect(runs).toBe(after);
  });

  it('drops the ticks that come during a slow run, so a stop waits for that run only', async () => {
    let runs = 0;
    let inRun = false;
    const stop = startPeriodic(async () => {
      runs++;
      inRun = true;
      await sleep(50); // ten intervals
      inRun = false;
    }, 5);
    await until(() => runs >= 3 && inRun);
    const atStop = runs;
    await stop();
    expect(runs).toBe(atStop);
    expect(inRun).toBe(false);
  });

  it('goes on after a failing run', async () => {
    let runs = 0;
    const stop = startPeriodic(async () => {
      runs++;
      throw new Error('failed');
    }, 5);
    await until(() => runs >= 2);
    await stop();
  });
});
