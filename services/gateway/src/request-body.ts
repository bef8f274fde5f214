import type { IncomingMessage } from 'node:http';
import { ApiError } from '@billing/contracts';

/** The most of a request body the gateway holds, to read it ahead or forward it; the services take far less. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A request's body, read in full: 413 `payload_too_large` once it passes `MAX_BODY_BYTES`, and
 * what the stream throws if the client goes away while sending it.
 */
export async function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'payload_too_large', 'The request body exceeds 1 MB');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
