import type { IncomingHttpHeaders } from 'node:http';
import express, { type RequestHandler } from 'express';
import { ApiError } from '@billing/contracts';
import { checkSignedBody } from './identity';

/**
 * One way to read a JSON body, for the gateway and every service (docs/errors.md, "One reading
 * of a body"): UTF-8 bytes as they came, without a byte-order mark and without a
 * `Content-Encoding`. express.json alone would strip a BOM, decode UTF-16 and inflate gzip,
 * while the gateway reads the raw bytes for its per-customer limits and idempotency hash; a body
 * the two would read differently is refused by both instead, before any effect or limit.
 */
export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export const startsWithByteOrderMark = (body: Buffer): boolean =>
  body.length >= UTF8_BOM.length && body.subarray(0, UTF8_BOM.length).equals(UTF8_BOM);

export const byteOrderMarkRefusal = () =>
  ApiError.of(
    'bad_request',
    'Request body is not valid JSON: it starts with a byte-order mark (U+FEFF); send UTF-8 without one',
  );

const unsupportedMediaType = (message: string) => new ApiError(415, 'unsupported_media_type', message);

const hasBody = (headers: IncomingHttpHeaders) =>
  headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/**
 * What the headers alone rule out: a compressed body (415), or a JSON body in another charset
 * than UTF-8 (415). Null when the body may be read.
 */
export function bodyHeadersRefusal(headers: IncomingHttpHeaders): ApiError | null {
  if (!hasBody(headers)) return null;
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    return unsupportedMediaType(`Content-Encoding ${encoding} is not accepted: send the body uncompressed`);
  }
  const type = headers['content-type'] ?? '';
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (JSON_TYPE.test(type) && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return unsupportedMediaType(`JSON bodies are UTF-8; charset=${charset.slice(0, 40)} is not accepted`);
  }
  return null;
}

/** Refuses by the headers (`bodyHeadersRefusal`) before anything reads the body. */
export const refuseUnreadableBodies: RequestHandler = (req, _res, next) => {
  next(bodyHeadersRefusal(req.headers) ?? undefined);
};

/**
 * The services' JSON body parser: `refuseUnreadableBodies`, then express.json with nothing
 * inflated and a leading BOM refused (400, as malformed JSON), and a signed call's bytes checked
 * against its signature (`checkSignedBody`, 401). `keepRawBody`, for a proxy that reads a body
 * and forwards it: its bytes are kept as `req.rawBody`, to be sent as they came.
 */
export function jsonBodies(limit: string | number, { keepRawBody = false } = {}): RequestHandler[] {
  return [
    refuseUnreadableBodies,
    express.json({
      limit,
      inflate: false,
      verify: (req, _res, body) => {
        checkSignedBody(req as express.Request, body);
        if (startsWithByteOrderMark(body)) throw byteOrderMarkRefusal();
        if (keepRawBody) (req as { rawBody?: Buffer }).rawBody = body;
      },
    }),
  ];
}

/**
 * The services' form parser (hosted pages, the portal, the card form): URL-encoded fields, a
 * signed call's bytes checked against its signature as `jsonBodies` does. Every parser a
 * service mounts comes from here, so no route reads a body its signature does not cover.
 */
export function formBodies(limit: string | number): RequestHandler {
  return express.urlencoded({
    extended: false,
    limit,
    verify: (req, _res, body) => checkSignedBody(req as express.Request, body),
  });
}
