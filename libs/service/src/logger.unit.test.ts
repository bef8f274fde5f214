import { createLogger } from './logger';
import { logFormat, prettyLogLine } from './pretty-log';

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

describe('log format', () => {
  it('is JSON when the output is not a terminal, pretty on one, and LOG_FORMAT decides over both', () => {
    expect(logFormat(undefined, false)).toBe('json');
    expect(logFormat(undefined, true)).toBe('pretty');
    expect(logFormat('json', true)).toBe('json');
    expect(logFormat('pretty', false)).toBe('pretty');
    expect(() => logFormat('yaml', true)).toThrow('LOG_FORMAT must be json or pretty, got "yaml"');
  });

  it('writes a request as one readable line: time, level, service, method, path, status, duration, the rest as key=value', () => {
    const lines: string[] = [];
    const logger = createLogger('billing', {
      level: 'info',
      format: 'pretty',
      destination: { write: (line) => lines.push(line) },
    });
    logger
      .child({ service: 'gateway' })
      .child({ request_id: 'req_1' })
      .info({ method: 'POST', path: '/v1/products', status: 201, duration_ms: 3.1 }, 'request completed');
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}gateway {7}POST \/v1\/products 201 3\.1 ms {2}request_id=req_1\n$/,
    );
  });

  it('redacts before it formats, and passes a line that is not JSON through', () => {
    const lines: string[] = [];
    createLogger('catalog', {
      level: 'info',
      format: 'pretty',
      destination: { write: (line) => lines.push(line) },
    }).warn({ authorization: 'Bearer sk_test_secret', attempt: 2 }, 'retrying');
    expect(lines[0]).toMatch(/ WARN {2}catalog {7}retrying {2}.*attempt=2\n$/);
    expect(lines[0]).not.toContain('sk_test_secret');
    expect(prettyLogLine('plain text')).toBe('plain text\n');
  });
});
