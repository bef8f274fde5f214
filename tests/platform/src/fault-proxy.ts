import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the proxy fails one call whose path matches: `hold`, the service's answer is held for
 * `ms` before it is passed on (past the caller's timeout); `drop`, the connection is cut once
 * the service has answered, so the call reached the service and its answer is lost.
 */
export type Fault =
  { path: RegExp; kind: 'hold'; ms: number } | { path: RegExp; kind: 'drop'; untilDisarmed?: boolean };

/**
 * A proxy between two services that loses answers on purpose: each fault armed with `arm`
 * applies to the next call whose path matches it, once (or to every such call, with
 * `untilDisarmed`, until `disarm`). Everything else passes as it is.
 */
export class FaultProxy {
  private readonly faults: Fault[] = [];
  private server: Server | null = null;
  /** The paths of the calls whose answers were lost, in order. */
  readonly lost: string[] = [];

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.pass(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  arm(fault: Fault): void {
    this.faults.push(fault);
  }

  /** Takes back every fault still armed. */
  disarm(): void {
    this.faults.length = 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private pass(req: IncomingMessage, res: ServerResponse): void {
    const index = this.faults.findIndex((fault) => fault.path.test(req.url ?? ''));
    const armed = index >= 0 ? this.faults[index]! : null;
    const keep = armed?.kind === 'drop' && armed.untilDisarmed;
    const fault = armed && !keep ? this.faults.splice(index, 1)[0]! : armed;
    const url = new URL(req.url ?? '/', this.target);
    const upstream = request(url, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const reply = () => {
          if (res.destroyed) return;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        };
        if (!fault) return reply();
        this.lost.push(req.url ?? '');
        if (fault.kind === 'drop') return req.socket.destroy();
        setTimeout(reply, fault.ms);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
