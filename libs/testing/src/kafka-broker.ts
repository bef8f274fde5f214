import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const scripts = join(__dirname, '..', '..', '..', 'scripts');
const run = promisify(execFile);

/**
 * A Kafka broker of a test's own, on its own ports, that the test may stop and start again
 * (the shared broker of KAFKA_BROKERS must stay up for the other suites). It runs through the
 * project's scripts, so it needs what they need: java and mvn, or the jars already cached.
 */
export class DedicatedKafkaBroker {
  constructor(readonly port: number) {}

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts the broker; `fresh` deletes what an earlier run left on this port first. */
  async start(fresh = false): Promise<void> {
    await this.script('kafka-start.sh', fresh);
  }

  /** Stops the broker and keeps its data, like an operator's restart; `forget` deletes it too. */
  async stop(forget = false): Promise<void> {
    await this.script('kafka-stop.sh', forget);
  }

  private async script(name: string, resetData: boolean): Promise<void> {
    const env = {
      ...process.env,
      KAFKA_PORT: String(this.port),
      KAFKA_CONTROLLER_PORT: String(this.port + 1),
      KAFKA_RESET_DATA: resetData ? '1' : '0',
    };
    await run('bash', [join(scripts, name)], { env, timeout: 180_000 });
  }
}
