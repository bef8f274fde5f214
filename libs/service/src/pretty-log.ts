import type { DestinationStream } from 'pino';

/** How log lines are written: JSON for machines, one readable line each for a person. */
export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT when set (`json` or `pretty`), otherwise pretty only when the output is a
 * terminal: piped or collected output (containers, CI, log shippers) stays JSON.
 */
export function logFormat(setting = process.env.LOG_FORMAT, isTerminal = Boolean(process.stdout.isTTY)): LogFormat {
  if (setting === undefined || setting === '') return isTerminal ? 'pretty' : 'json';
  if (setting === 'json' || setting === 'pretty') return setting;
  throw new Error(`LOG_FORMAT must be json or pretty, got ${JSON.stringify(setting)}`);
}

const LEVEL_COLOURS: Record<string, string> = {
  trace: '90',
  debug: '36',
  info: '32',
  warn: '33',
  error: '31',
  fatal: '35',
};
/** Shown elsewhere in the line, or noise to a person reading a terminal. */
const LEFT_OUT = new Set(['time', 'level', 'msg', 'name', 'service', 'pid', 'hostname']);
const REQUEST_FIELDS = ['method', 'path', 'status', 'duration_ms'];

const value = (field: unknown) => (typeof field === 'string' ? field : JSON.stringify(field));

/**
 * One JSON log line as a person reads it:
 * `12:00:01 INFO  gateway  POST /v1/products 201 3.1 ms  request_id=req_...`.
 * A line that is not JSON is passed through.
 */
export function prettyLogLine(json: string, colour = false): string {
  let line: Record<string, unknown>;
  try {
    line = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = String(line.level ?? 'info');
  const levelText = level.toUpperCase().padEnd(5);
  const time = typeof line.time === 'string' ? line.time.slice(11, 19) : '';
  const source = String(line.service ?? line.name ?? '');
  const isRequest = REQUEST_FIELDS.every((field) => field in line);
  const message = isRequest
    ? `${line.method} ${line.path} ${line.status} ${line.duration_ms} ms${line.aborted ? ' (aborted)' : ''}`
    : String(line.msg ?? '');
  const rest = Object.entries(line)
    .filter(([key]) => !LEFT_OUT.has(key) && !(isRequest && [...REQUEST_FIELDS, 'aborted'].includes(key)))
    .map(([key, field]) => `${key}=${value(field)}`);
  const shownLevel = colour ? `\u001b[${LEVEL_COLOURS[level] ?? '0'}m${levelText}\u001b[0m` : levelText;
  return `${[time, shownLevel, source.padEnd(13), message, ...(rest.length ? [` ${rest.join(' ')}`] : [])].join(' ')}\n`;
}

/** A pino destination that writes each line pretty to `out` (stdout by default). */
export function prettyDestination(out: { write(text: string): unknown } = process.stdout): DestinationStream {
  const colour = Boolean((out as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR;
  return { write: (json: string) => void out.write(prettyLogLine(json, colour)) };
}
