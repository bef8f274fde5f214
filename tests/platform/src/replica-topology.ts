import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Database, postgresDatabase } from '@billing/eventstore';
import { freePort } from '@billing/testing';
import { Kafka, logLevel } from 'kafkajs';

/**
 * The distributed topology of replicas.int.test.ts: each service a `node services/<name>/dist/main.js`
 * process on one PostgreSQL database and one Kafka topic prefix of its own, and a round-robin
 * proxy in front of each service that runs as several replicas (what a Kubernetes service does).
 */

const root = join(__dirname, '..', '..', '..');

export type ServiceName = 'catalog' | 'promotions' | 'checkout' | 'billing' | 'notifications' | 'gateway';

/** One service process; its output is kept (the last part) for failure messages. */
export class Replica {
  private child: ChildProcess | undefined;
  private output = '';
  readonly url: string;

  constructor(
    readonly label: string,
    private readonly service: ServiceName,
    readonly port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  start(env: NodeJS.ProcessEnv): void {
    const main = join(root, 'services', this.service, 'dist', 'main.js');
    const child = spawn(process.execPath, [main], {
      env: { ...env, PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-6000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.child = child;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for `/readyz`; fails at once, with the process's output, if the process exits first. */
  async ready(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${this.label} exited before it was ready:\n${this.output}`);
      const status = await fetch(`${this.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${this.label} not ready after ${timeoutMs} ms:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** `kill -9`: nothing is flushed, drained or released by the process itself. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  log(): string {
    return `--- ${this.label} (${this.running ? 'running' : 'stopped'}) ---\n${this.output.slice(-2000)}`;
  }
}

/** Hop-by-hop headers: each side of the proxy has its own connection. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];
const endToEnd = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));

/**
 * A round-robin HTTP proxy in front of the replicas of one service: each request goes to the next
 * replica, and to the one after it when a replica refuses the connection (it is down). A request
 * cut off after it reached a replica is not sent again (it may have had its effect): the caller
 * gets a 502 or a reset, as behind a real load balancer.
 */
export async function startRoundRobin(targets: string[]) {
  let next = 0;
  /** Attempt `tried` of a request whose first attempt went to replica `first`. */
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, first: number, tried: number) => {
    const target = new URL(targets[(first + tried) % targets.length]!);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), 'content-length': String(body.length) },
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.on('error', () => res.destroy());
        answer.pipe(res);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && tried + 1 < targets.length) forward(req, res, body, first, tried + 1);
      else if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${error.code}`);
      else res.destroy();
    });
    upstream.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), next++, 0));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A PostgreSQL database of its own for one run: the services use fixed schema names (`billing`, ...). */
export async function freshDatabase(serverUrl: string) {
  const name = `replicas_${randomBytes(4).toString('hex')}`;
  const server = postgresDatabase({ connectionString: serverUrl, max: 1 });
  await server.exec(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database: Database = postgresDatabase({ connectionString: url.toString(), max: 2 });
  return {
    name,
    url: url.toString(),
    database,
    async drop() {
      await database.close().catch(() => undefined);
      await server.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await server.close();
    },
  };
}

export interface TopicMessage {
  topic: string;
  id: string;
  globalPosition: number;
}

/**
 * Reads whole topics from the beginning with a consumer group of its own, as an analytics
 * consumer would, until it reached the end each partition had when the read began.
 */
export async function readTopics(brokers: string[], topics: string[]): Promise<TopicMessage[]> {
  const kafka = new Kafka({ clientId: 'replicas-test-reader', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `replicas-test-reader-${randomBytes(4).toString('hex')}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  try {
    const remaining = new Map<string, number>();
    for (const topic of topics) {
      for (const { partition, high } of await admin.fetchTopicOffsets(topic)) {
        if (Number(high) > 0) remaining.set(`${topic}/${partition}`, Number(high));
      }
    }
    const messages: TopicMessage[] = [];
    let done: () => void = () => undefined;
    const allRead = new Promise<void>((resolve) => (done = resolve));
    if (remaining.size === 0) done();
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const envelope = JSON.parse(message.value!.toString()) as { id: string; global_position: number };
        messages.push({ topic, id: envelope.id, globalPosition: envelope.global_position });
        const key = `${topic}/${partition}`;
        if (Number(message.offset) + 1 >= (remaining.get(key) ?? 0)) remaining.delete(key);
        if (remaining.size === 0) done();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`topics not read to their end in 90 s: ${[...remaining.keys()]}`)),
        90_000,
      );
    });
    await Promise.race([allRead, bound]).finally(() => clearTimeout(timer));
    return messages;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

/** Removes the run's topics from the shared broker. */
export async function deleteTopicsWithPrefix(brokers: string[], prefix: string): Promise<void> {
  const kafka = new Kafka({ clientId: 'replicas-test-cleanup', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}

export { freePort };
