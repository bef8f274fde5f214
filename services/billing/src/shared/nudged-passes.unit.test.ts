import { nudgedPasses } from './nudged-passes';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('nudged passes', () => {
  it('run one at a time, once more after nudges that came meanwhile, and again while a pass leaves work', async () => {
    const started: number[] = [];
    let release: () => void = () => undefined;
    let leaveWork = false;
    const passes = nudgedPasses(async () => {
      started.push(started.length + 1);
      await new Promise<void>((resolve) => (release = resolve));
      return leaveWork;
    }, jest.fn());
    passes.nudge();
    passes.nudge();
    passes.nudge();
    expect(started).toEqual([1]);
    release();
    await tick();
    expect(started).toEqual([1, 2]); // the three nudges made one more pass
    leaveWork = true;
    release();
    await tick();
    expect(started).toEqual([1, 2, 3]); // it left work: at once again
    leaveWork = false;
    release();
    await tick();
    expect(started).toEqual([1, 2, 3]);
  });

  it('report a failed pass and run again when nudged; once drained, start no pass', async () => {
    const onError = jest.fn();
    let fail = true;
    let runs = 0;
    const passes = nudgedPasses(async () => {
      runs++;
      if (fail) throw new Error('database gone');
    }, onError);
    passes.nudge();
    await tick();
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'database gone' }));
    fail = false;
    passes.nudge();
    await passes.drain();
    expect(runs).toBe(2);
    passes.nudge();
    await tick();
    expect(runs).toBe(2);
  });
});
