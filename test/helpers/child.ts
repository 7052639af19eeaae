// A real `posthorn serve` child process for tests that must kill it (kill -9 durability) or run
// it as a user would. Configured through POSTHORN_* variables on a data dir of the test's own.
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { Zone } from './dns';
import type { ApiBody } from './posthorn';
import { until } from './wait';

const MAIN = join(import.meta.dir, '../../src/main.ts');

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

export interface ServeChild {
  base: string;
  apiKey: string;
  headers: Record<string, string>;
  /** Start `serve` (again, on the same data) and wait for /health. */
  start(): Promise<void>;
  /** SIGKILL the running process and wait for it to go. */
  kill(): Promise<void>;
  readonly process: ReturnType<typeof Bun.spawn> | null;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: ApiBody }>;
}

/**
 * Provision a team with `init --json` in `dataDir`, ready to `start()`. With `apiKey` (another
 * node of a cluster, on the database a first node was provisioned in) nothing is provisioned.
 * With `binary`, that executable (a build of scripts/build.ts) runs instead of `bun src/main.ts`.
 */
export async function serveChild(dataDir: string, env: Record<string, string> = {}, opts: { apiKey?: string; binary?: string } = {}): Promise<ServeChild> {
  const posthorn = opts.binary ? [opts.binary] : [process.execPath, MAIN];
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const fullEnv = {
    ...process.env,
    POSTHORN_LOG: 'silent',
    POSTHORN_DATA_DIR: dataDir,
    POSTHORN_HTTP_HOST: '127.0.0.1',
    POSTHORN_HTTP_PORT: String(port),
    POSTHORN_SMTP_STARTTLS_PORTS: '',
    POSTHORN_SMTP_TLS_PORTS: '',
    POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
    POSTHORN_LIMITS_REQUESTS_PER_SECOND: '100000',
    ...env,
  };
  const api_key = opts.apiKey ?? JSON.parse(Bun.spawnSync([...posthorn, 'init', '--json'], { env: fullEnv }).stdout.toString()).api_key;
  const headers = { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' };
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  return {
    base,
    apiKey: api_key,
    headers,
    get process() {
      return proc;
    },
    async start() {
      proc = Bun.spawn([...posthorn, 'serve'], { env: fullEnv, stdout: 'ignore', stderr: 'inherit' });
      await until(
        () =>
          fetch(`${base}/health`).then(
            (r) => r.ok,
            () => false,
          ),
        'posthorn serve to answer /health',
      );
    },
    async kill() {
      proc?.kill('SIGKILL');
      await proc?.exited;
    },
    async api(method, path, body) {
      const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    },
  };
}

/**
 * Make `name` a verified sending domain of `server` through real DNS checks: its records published
 * in `zone`, verified by the server itself; dest.test's MX is mx.dest.test at 127.0.0.1 (a sink on
 * the port the server delivers to). Returns the domain's id.
 */
export async function verifiedDomain(server: ServeChild, zone: Zone, name: string): Promise<string> {
  const created = (await server.api('POST', '/domains', { name })).body;
  zone.publish(name, created.records);
  zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  zone.set('mx.dest.test', 'A', ['127.0.0.1']);
  await server.api('POST', `/domains/${created.id}/verify`);
  await until(async () => (await server.api('GET', `/domains/${created.id}`)).body.status === 'verified', 'verification');
  return created.id;
}
