import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request a lane took: node's own object, with the two fields of express's that handlers read. */
export type LaneRequest = IncomingMessage & {
  /** Always set on a server's request. */
  url: string;
  method: string;
  /** The request target as it came (express's `originalUrl`). */
  originalUrl: string;
  /** The client's address (express's `req.ip`, `trust proxy` applied), when the lane sets it. */
  ip?: string;
};

/** Node's response, with express's `locals` (the request id, the matched route, the caller). */
export type LaneResponse = ServerResponse & { locals: Record<string, unknown> };

export type LaneHandler = (req: LaneRequest, res: LaneResponse) => void;

/**
 * A hot path that answers some requests before express sees them (docs/decisions/0026). Express
 * swaps the prototypes of node's request and response for its own on every request, which leaves
 * node's HTTP code slow on those objects, and walks its layers in turn; a path that needs none of
 * express's API is cheaper without both. `accept` decides from the request alone, without side
 * effects: what it declines goes to express as before. The service's request line, request id
 * and metrics are kept the same on both ways (`createApp`).
 */
export interface Lane {
  accept(req: IncomingMessage): LaneHandler | undefined;
}
