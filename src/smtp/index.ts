// The SMTP listeners (docs/mail.md §4): one per port of `smtp.starttls_ports` (STARTTLS offered,
// RFC 3207) and of `smtp.tls_ports` (TLS from the first byte, RFC 8314 §3.3), all bound to
// `smtp.host`. A port that cannot be bound is reported with the reason and the fix, and the
// other listeners start anyway. `serve` starts them and stops them on shutdown; tests use port 0
// and read the bound ports from `listeners`. With `threads` > 1 every port is also served by a
// listener on each of threads - 1 listener threads (threads.ts), bound with SO_REUSEPORT.
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import type { SMTPServer } from 'smtp-server';
import type { Config } from '../config';
import { log } from '../log';
import { smtpCertificate } from './certificate';
import { createSmtpServer, localDesk, sharedLimits, type SmtpDeps } from './server';
import { sharedCells, acceptedCell } from './limits';
import { ListenerThread, type ThreadWake } from './threads';

export type { SmtpDeps, ThreadWake };

/** Listener threads beyond this many buy nothing: the back office and the HTTP listener need cores too. */
const MAX_LISTENER_THREADS = 4;

/**
 * How many threads serve the SMTP ports: one per spare core (cores - 1, the other left to the back
 * office, the JIT and LMDB's writers), up to MAX_LISTENER_THREADS — so one, as before, on 1 or 2
 * cores: on 2 shared cores a second listener thread split the listener's CPU in two but did not
 * raise the ingest rate, and cost about a tenth more CPU per message (README "Benchmarks", after
 * SMTP listener threads). One in cluster mode (PostgreSQL): each thread would hold a pool of
 * database connections of its own, and a node's ingest there waits on the database's round trips,
 * not on this thread's CPU.
 */
export function listenerThreads(config: Pick<Config, 'database'>, cores = availableParallelism()): number {
  if (config.database.url) return 1;
  return Math.max(1, Math.min(cores - 1, MAX_LISTENER_THREADS));
}

export type ListenerMode = 'starttls' | 'tls';

export interface Listener {
  mode: ListenerMode;
  /** The port as configured (0 = any free port). */
  configured: number;
  /** The port actually bound. */
  port: number;
}

export interface BindFailure {
  mode: ListenerMode;
  port: number;
  /** The system's error code: EACCES, EADDRINUSE, EADDRNOTAVAIL, … */
  reason: string;
  fix: string;
}

export interface SmtpListeners {
  listeners: Listener[];
  failures: BindFailure[];
  /** The bound port of the first listener of a mode (tests). */
  port(mode: ListenerMode): number;
  /** Sessions open at this moment, across the listeners (operator metrics). */
  sessions(): number;
  /** Message bytes held in memory right now, across the listeners (tests: none stay after a session is gone). */
  bufferedBytes(): number;
  /**
   * Serve this certificate from now on (a renewed ACME one, docs/mail.md §4, "Certificates by ACME"): each listener's
   * TLS context is rebuilt (smtp-server `updateSecureContext`); sessions already in TLS keep theirs.
   */
  useCertificate(cert: { key: string; cert: string }): void;
  /** Sessions each thread has accepted since the start, the main thread's first (tests: every thread serves). */
  accepted(): number[];
  /** Resolves once every listener thread has handled what it was sent before (tests: a certificate swap). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** How to get past a bind error, for the operator reading the log. */
export function bindAdvice(code: string, port: number, host: string): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `port ${port} is below 1024 and needs privileges: run as root, or grant the binary the capability with \`setcap cap_net_bind_service=+ep /path/to/posthorn\`, or under systemd set \`AmbientCapabilities=CAP_NET_BIND_SERVICE\` (scripts/posthorn.service does)`;
    case 'EADDRINUSE':
      return `another program already listens on ${host}:${port} — usually another MTA (postfix, exim4, sendmail): stop and disable it, or remove ${port} from smtp.starttls_ports / smtp.tls_ports`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine: set smtp.host to one of its addresses, or 0.0.0.0`;
    default:
      return 'check smtp.host and the SMTP port settings';
  }
}

function listen(server: SMTPServer['server'], port: number, host: string, reusePort: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen({ port, host, reusePort }, () => {
      server.off('error', onError);
      resolve((server.address() as { port: number }).port);
    });
  });
}

/**
 * Bind a listener that threads will share the port with. SO_REUSEPORT would also let a second
 * Posthorn (same user) bind the port beside this one: the port is first bound without it, so a
 * port already in use is refused as before (a listener with SO_REUSEPORT keeps out one without),
 * then let go and bound again with it — the port found for 0 too.
 */
async function listenShared(server: SMTPServer['server'], port: number, host: string): Promise<number> {
  const probe = createServer();
  const free = await listen(probe, port, host, false);
  await new Promise((resolve) => probe.close(resolve));
  return listen(server, free, host, true);
}

/**
 * Start the listeners. `threads` (serve: `listenerThreads`) > 1 also starts threads - 1 listener
 * threads, told of by `wake` what they commit.
 */
export async function startSmtp(svc: SmtpDeps, opts: { threads?: number; wake?: ThreadWake } = {}): Promise<SmtpListeners> {
  const threads = opts.wake ? Math.max(1, opts.threads ?? 1) : 1;
  const { host, starttls_ports, tls_ports } = svc.config.smtp;
  const wanted: { mode: ListenerMode; port: number }[] = [
    ...starttls_ports.map((port) => ({ mode: 'starttls' as const, port })),
    ...tls_ports.map((port) => ({ mode: 'tls' as const, port })),
  ];
  const listeners: Listener[] = [];
  const failures: BindFailure[] = [];
  const servers: SMTPServer[] = [];
  // One session count, one set of AUTH failure counts and one memory budget for every listener of
  // every thread.
  const cells = sharedCells(threads);
  const limits = sharedLimits(svc.config, cells, 0);
  const desk = localDesk(svc, limits.gate);
  const others: ListenerThread[] = [];
  if (wanted.length) {
    const cert = await smtpCertificate(svc.config);
    for (const { mode, port } of wanted) {
      const server = createSmtpServer(desk, cert, mode, limits);
      try {
        const bound = threads > 1 ? await listenShared(server.server, port, host) : await listen(server.server, port, host, false);
        servers.push(server);
        listeners.push({ mode, configured: port, port: bound });
        log.info('smtp.listening', { host, port: bound, mode, hostname: svc.config.smtp.hostname, certificate: cert.source });
      } catch (e) {
        const reason = (e as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
        const failure = { mode, port, reason, fix: bindAdvice(reason, port, host) };
        failures.push(failure);
        log.error('smtp.bind_failed', { host, ...failure, error: (e as Error).message });
      }
    }
    if (listeners.length && opts.wake) {
      const init = {
        config: opts.wake.config,
        cells,
        cert: { key: cert.key, cert: cert.cert },
        listeners: listeners.map((l) => ({ mode: l.mode, port: l.port })),
      };
      const started = await Promise.all(
        Array.from({ length: threads - 1 }, (_, i) => ListenerThread.start(i + 1, init, desk, opts.wake as ThreadWake, limits.gate)),
      );
      for (const t of started) if (t) others.push(t);
      if (threads > 1) log.info('smtp.listener_threads', { threads: others.length + 1 });
    }
  }
  return {
    listeners,
    failures,
    port(mode) {
      const l = listeners.find((x) => x.mode === mode);
      if (!l) throw new Error(`no ${mode} SMTP listener is running`);
      return l.port;
    },
    sessions() {
      return limits.gate.size;
    },
    bufferedBytes() {
      return limits.budget.size;
    },
    useCertificate(cert) {
      for (const s of servers) s.updateSecureContext({ key: cert.key, cert: cert.cert });
      for (const t of others) t.useCertificate(cert);
      log.info('smtp.certificate_swapped', { listeners: servers.length, threads: others.length + 1 });
    },
    accepted() {
      return Array.from({ length: threads }, (_, i) => Atomics.load(cells, acceptedCell(i)));
    },
    async settled() {
      await Promise.all(others.map((t) => t.settled()));
    },
    async stop() {
      await Promise.all([...servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))), ...others.map((t) => t.stop())]);
    },
  };
}
