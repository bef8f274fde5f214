import { createLogger } from './logger';

describe('createLogger', () => {
  const saved = process.env.LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = saved;
  });

  it('takes its level from LOG_LEVEL, default info', () => {
    delete process.env.LOG_LEVEL;
    expect(createLogger('a').level).toBe('info');
    process.env.LOG_LEVEL = 'silent';
    expect(createLogger('a').level).toBe('silent');
  });

  it('writes JSON lines with the service name, level label and ISO time', () => {
    const lines: string[] = [];
    createLogger('catalog', { level: 'info', destination: { write: (line) => lines.push(line) } }).info({ a: 1 }, 'hi');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      name: 'catalog',
      level: 'info',
      msg: 'hi',
      a: 1,
      time: expect.stringMatching(/Z$/),
    });
  });
});
