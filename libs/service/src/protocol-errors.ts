import { type IncomingMessage, type Server, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

/**
 * Errors Node's HTTP server answers on its own, before express sees a request, written in the
 * spec's envelope instead of Node's empty bodies (docs/errors.md, "Errors before express"):
 *
 * | what | status | code |
 * | --- | --- | --- |
 * | headers (or the request line) larger than the limit, 16 KB by default | 431 | `request_header_fields_too_large` |
 * | a request that is not HTTP: bad request line, header, chunking or both Content-Length and Transfer-Encoding | 400 | `bad_request` |
 * | headers or the whole request slower than the server's timeouts | 408 | `request_timeout` |
 * | an `Expect` other than `100-continue` | 417 | `expectation_failed` |
 *
 * The connection is closed after each, as Node does: the parser cannot go on.
 */
export const PROTOCOL_ERRORS = {
  request_header_fields_too_large: 431,
  bad_request: 400,
  request_timeout: 408,
  expectation_failed: 417,
} as const;

type ProtocolErrorCode = keyof typeof PROTOCOL_ERRORS;

const MESSAGES: Record<ProtocolErrorCode, string> = {
  request_header_fields_too_large: 'The request line and headers exceed the size limit (16 KB)',
  bad_request: 'The request is not valid HTTP',
  request_timeout: 'The request took too long to arrive',
  expectation_failed: 'Only Expect: 100-continue is supported',
};

export function envelopeOf(code: ProtocolErrorCode): string {
  return JSON.stringify({ error: { code, message: MESSAGES[code] } });
}

function codeOfClientError(error: NodeJS.ErrnoException): ProtocolErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'request_header_fields_too_large';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

/** A whole HTTP/1.1 response with a JSON envelope, for a socket express never saw. */
export function rawErrorResponse(code: ProtocolErrorCode): string {
  const status = PROTOCOL_ERRORS[code];
  const body = envelopeOf(code);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** Installs the envelope answers on a server; call before it listens. */
export function answerProtocolErrorsInEnvelope(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Mirrors Node's own handler: answer only when nothing of a response is on the wire yet.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const code = codeOfClientError(error);
    logger.debug({ err: { code: error.code, message: error.message }, status: PROTOCOL_ERRORS[code] }, 'client error');
    socket.end(rawErrorResponse(code));
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = envelopeOf('expectation_failed');
    res.writeHead(PROTOCOL_ERRORS.expectation_failed, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
  });
}
