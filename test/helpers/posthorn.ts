// Start a real Posthorn (HTTP on a loopback port, LMDB in a temp dir) inside the test process.
// With POSTHORN_TEST_STORE=pg the store is PostgreSQL instead: a database of its own on the test
// process's private server (helpers/postgres.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend } from 'resend';
import { loadConfig } from '../../src/config';
import { createServices, closeServices, type Services } from '../../src/services';
import { startHttp } from '../../src/api/server';
import { createTeam, type Credentials } from '../../src/accounts/bootstrap';
import { setQuiet } from '../../src/log';
import { startScheduler } from '../../src/scheduler';
import { startDnsServer } from './dns';
import { postgres, testStore } from './postgres';

setQuiet(true);

/** A loopback port free right now (for a server whose URL must be known before it starts: public_url). */
export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The database of each data_dir a test restarts Posthorn on (POSTHORN_TEST_STORE=pg). */
const databaseOf = new Map<string, string>();

/** The JSON body of an API answer as a test reads it: its shape is what the test asserts. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read some 500 answers of every route; a type per route is the API's response schema, not a test's.
export type ApiBody = any;

export interface Running {
  url: string;
  apiKey: string;
  creds: Credentials;
  svc: Services;
  dataDir: string;
  resend: Resend;
  /** A Resend SDK client for another key. */
  client(key: string): Resend;
  /** Plain HTTP with a key (default: the bootstrap key). */
  api(
    method: string,
    path: string,
    init?: { body?: unknown; raw?: string; key?: string | null; headers?: Record<string, string> },
  ): Promise<{ status: number; body: ApiBody; headers: Headers }>;
  newTeam(): Promise<Credentials>;
  stop(): Promise<void>;
}

/** `now`: the services' clock (a TestClock's `now`, helpers/clock.ts), for tests that need a later time. */
export async function startPosthorn(overrides: Record<string, unknown> = {}, opts: { now?: () => number } = {}): Promise<Running> {
  const dataDir = (overrides.data_dir as string) ?? mkdtempSync(join(tmpdir(), 'posthorn-test-'));
  // Tests never reach DNS outside 127.0.0.0/8: without a `dns.servers` override, every
  // lookup (MX lookups of queued mail included) goes to a loopback DNS server refusing all queries,
  // a fast temporary failure.
  // Cluster mode under test: a fresh database unless the test names one. A test that gives its own
  // data_dir starts Posthorn again on it (a restart): it finds the same database again.
  const pg = testStore() === 'pg' && !('database.url' in overrides) ? await postgres() : null;
  const keep = typeof overrides.data_dir === 'string';
  let databaseUrl: string | null = null;
  if (pg) databaseUrl = (keep && databaseOf.get(dataDir)) || (await pg.database());
  if (pg && keep) databaseOf.set(dataDir, databaseUrl!);
  const refusingDns = 'dns.servers' in overrides ? null : await startDnsServer();
  refusingDns?.failWith('REFUSED');
  const config = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      'http.host': '127.0.0.1',
      'http.port': 0,
      'smtp.host': '127.0.0.1',
      'smtp.hostname': 'mx.posthorn.test',
      'smtp.starttls_ports': [],
      'smtp.tls_ports': [],
      'limits.requests_per_second': 1000,
      ...(databaseUrl ? { 'database.url': databaseUrl } : {}),
      ...(refusingDns ? { 'dns.servers': [refusingDns.address] } : {}),
      ...overrides,
    },
  });
  const svc = await createServices(config, opts);
  const creds = await createTeam(svc.store);
  const server = startHttp(svc);
  const scheduler = startScheduler(svc);
  await svc.backOffice.start();
  const url = `http://127.0.0.1:${server.port}`;
  const client = (key: string) => new Resend(key, { baseUrl: url } as never);
  const run: Running = {
    url,
    apiKey: creds.api_key,
    creds,
    svc,
    dataDir,
    resend: client(creds.api_key),
    client,
    async api(method, path, init = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(init.headers ?? {}) };
      const key = init.key === undefined ? creds.api_key : init.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      const res = await fetch(url + path, {
        method,
        headers,
        body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body, headers: res.headers };
    },
    newTeam: () => createTeam(svc.store),
    async stop() {
      scheduler.stop();
      await server.stop(true);
      await svc.domains.idle();
      await closeServices(svc);
      await refusingDns?.close();
      if (pg && databaseUrl && !keep) await pg.drop(databaseUrl);
      if (!overrides.data_dir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return run;
}
