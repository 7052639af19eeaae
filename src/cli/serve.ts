// `posthorn serve`: open the store, bootstrap on first start, start every listener and job,
// and shut down cleanly on SIGINT/SIGTERM.
import { type Config, ConfigError } from '../config';
import { notLocal } from '../delivery/ips';
import { createServices, closeServices } from '../services';
import { startHttp } from '../api/server';
import { createTeam } from '../accounts/bootstrap';
import { formatCredentials } from './init';
import { startScheduler } from '../scheduler';
import { startSmtp, listenerThreads } from '../smtp';
import { startCertificates } from './certificates';
import { log } from '../log';
import { keepMemoryTidy } from '../limits/memory';
import { formatStartupWarning, startupProblems } from '../health/startup';

export async function serve(config: Config): Promise<number> {
  // A signal during start-up is heard at once, and acted on once the start is complete: a stop
  // never races the parts still starting.
  let signalled: (signal: string) => void = () => {};
  const signal = new Promise<string>((resolve) => (signalled = resolve));
  const onSignal = (name: string) => () => signalled(name);
  process.on('SIGINT', onSignal('SIGINT'));
  process.on('SIGTERM', onSignal('SIGTERM'));

  // A sending IP that is not on this machine could never be bound: refuse to start, naming it.
  const missing = notLocal(config.delivery.ips);
  if (missing.length)
    throw new ConfigError('delivery.ips', `names ${missing.join(', ')}, not an address of this machine's network interfaces (os.networkInterfaces)`);
  const svc = await createServices(config);
  // Before anything writes: a crash's orphan body files, and old trash (store/lmdb/spill.ts).
  const files = await svc.store.sweepFiles();
  if (files.orphans || files.purged) log.info('store.files_swept', files);
  if (await svc.store.isEmpty()) {
    const creds = await createTeam(svc.store);
    process.stdout.write(formatCredentials(creds));
    log.info('bootstrap.team_created', { team_id: creds.team_id, admin_email: creds.admin_email });
  }
  // Defaults that cannot deliver say so at every start (docs/deliverability.md §1.1).
  const problems = startupProblems(config, (await svc.store.domains.everything()).length);
  if (problems.length) {
    process.stdout.write(formatStartupWarning(problems));
    log.warn('posthorn.cannot_deliver', { problems: problems.map((p) => ({ check: p.name, evidence: p.evidence, fix: p.fix })) });
  }
  const http = startHttp(svc);
  // A port that cannot be bound is logged with its fix; the other listeners run regardless. Every
  // port is served on one thread per spare core (up to four; one on 1–2 cores and in cluster mode).
  const smtp = await startSmtp(svc, { threads: listenerThreads(config), wake: svc });
  svc.telemetry.smtpSessions = () => smtp.sessions();
  // With tls.acme on: the certificate Posthorn obtains itself, on the SMTP and HTTPS listeners.
  const certificates = await startCertificates(svc, smtp);
  const scheduler = startScheduler(svc);
  const memory = keepMemoryTidy();
  await svc.backOffice.start();
  log.info('posthorn.started', { data_dir: config.data_dir, public_url: config.public_url });

  log.info('posthorn.stopping', { signal: await signal });
  scheduler.stop();
  memory.stop();
  await Promise.all([http.stop(), smtp.stop(), certificates?.stop()]);
  await closeServices(svc);
  return 0;
}
