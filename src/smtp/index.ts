// The SMTP listeners (docs/mail.md §4): one per port of `smtp.starttls_ports` (STARTTLS offered,
// RFC 3207) and of `smtp.tls_ports` (TLS from the first byte, RFC 8314 §3.3), all bound to
// `smtp.host`. A port that cannot be bound is reported with the reason and the fix, and the
// other listeners start anyway. `serve` starts them and stops them on shutdown; tests use port 0
// and read the bound ports from `listeners`.
import type { SMTPServer } from 'smtp-server';
import { log } from '../log';
import { smtpCertificate } from './certificate';
import { createSmtpServer, sharedLimits, type SmtpDeps } from './server';

export type { SmtpDeps };

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

function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve((server.server.address() as { port: number }).port);
    });
  });
}

export async function startSmtp(svc: SmtpDeps): Promise<SmtpListeners> {
  const { host, starttls_ports, tls_ports } = svc.config.smtp;
  const wanted: { mode: ListenerMode; port: number }[] = [
    ...starttls_ports.map((port) => ({ mode: 'starttls' as const, port })),
    ...tls_ports.map((port) => ({ mode: 'tls' as const, port })),
  ];
  const listeners: Listener[] = [];
  const failures: BindFailure[] = [];
  const servers: SMTPServer[] = [];
  // One session count, one set of AUTH failure counts and one memory budget for every listener.
  const limits = sharedLimits(svc.config);
  if (wanted.length) {
    const cert = await smtpCertificate(svc.config);
    for (const { mode, port } of wanted) {
      const server = createSmtpServer(svc, cert, mode, limits);
      try {
        const bound = await listen(server, port, host);
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
      log.info('smtp.certificate_swapped', { listeners: servers.length });
    },
    async stop() {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
