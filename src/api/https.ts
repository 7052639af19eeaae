// The HTTPS listeners of ACME (`tls.acme.https_ports`, docs/mail.md §4, "Certificates by ACME"): the same handler as the
// HTTP listener, with the certificate Posthorn obtained. Bun.serve cannot change a listener's
// certificate (its `reload` takes handlers only), so a renewed certificate is put in service by
// binding a second listener to the same port (SO_REUSEPORT) with it, then stopping the first
// gracefully: new connections get the new certificate, open ones finish on the old, none is refused.
import type { Server } from 'bun';
import type { ApiDeps } from './app';
import { createHandler } from './server';
import { RequestLog } from './platform/requestlog';
import { errorResponse } from './platform/json';
import { errors } from '../errors';
import { log } from '../log';

export interface HttpsListeners {
  /** The bound ports, in the order of `tls.acme.https_ports`. */
  ports: number[];
  useCertificate(cert: { key: string; cert: string }): void;
  stop(force?: boolean): Promise<void>;
}

export function startHttps(svc: ApiDeps, cert: { key: string; cert: string }): HttpsListeners {
  const requestLog = new RequestLog(svc.store);
  const handle = createHandler(svc, requestLog);
  const host = svc.config.http.host;
  const listen = (port: number, tls: { key: string; cert: string }): Server<undefined> =>
    Bun.serve({
      hostname: host,
      port,
      reusePort: true,
      tls: { key: tls.key, cert: tls.cert },
      maxRequestBodySize: 1024 * 1024 * 1024,
      idleTimeout: 120,
      fetch: handle,
      error(err) {
        log.error('http.error', { error: String(err?.stack ?? err) });
        return errorResponse(null, errors.internal());
      },
    });
  let servers = svc.config.tls.acme.https_ports.map((p) => listen(p, cert));
  // Listeners replaced by a renewal, finishing their open connections (a keep-alive one may idle for idleTimeout).
  const draining = new Set<Server<undefined>>();
  const ports = servers.map((s) => s.port!);
  for (const port of ports) log.info('https.listening', { url: `https://${host}:${port}` });
  return {
    ports,
    useCertificate(next) {
      const old = servers;
      servers = ports.map((p) => listen(p, next));
      for (const s of old) {
        draining.add(s);
        s.stop(false).finally(() => draining.delete(s));
      }
      log.info('https.certificate_swapped', { ports });
    },
    async stop(force = false) {
      await Promise.all([...servers, ...draining].map((s) => s.stop(force)));
      await requestLog.flush();
    },
  };
}
