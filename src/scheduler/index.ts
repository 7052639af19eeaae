// Background jobs on croner: due scheduled sends and broadcasts, retention/idempotency sweeps, DNS
// re-checks, the rate limit's share of the cluster.
import { Cron } from 'croner';
import type { Config } from '../config';
import type { Events } from '../events';
import type { Store } from '../store';
import type { BroadcastSender } from '../broadcasts/runner';
import type { ImportRunner } from '../imports';
import type { DomainVerifier } from '../domains/verify';
import type { Doctor } from '../health';
import type { DomainClaims } from '../domains/claims';
import type { TlsRptReports } from '../delivery/tls-rpt-reports';
import { log } from '../log';
import { releaseDue } from '../sending/scheduled';
import type { RateLimiter } from '../limits/ratelimit';
import type { AcmeManager } from '../acme/manager';
import { emptyTrash } from '../inboxes/trash';
import type { InboxListeners } from '../inboxes/hooks';

export interface Scheduler {
  stop(): void;
}

export interface SchedulerDeps {
  store: Store;
  events: Events;
  broadcasts: BroadcastSender;
  imports: ImportRunner;
  domains: DomainVerifier;
  doctor: Doctor;
  claims: DomainClaims;
  /** Yesterday's TLS-RPT reports (docs/deliverability.md §5). */
  tlsRpt: TlsRptReports;
  limiter: RateLimiter;
  /** The inboxes' search index, told of threads the trash sweep deletes. */
  inboxes: Pick<InboxListeners, 'search'>;
  /** Certificates by ACME (`tls.acme.enabled`); null when off. */
  acme: AcmeManager | null;
  /** Scheduled sends are queued as sending/enqueue.ts says (`delivery.sandbox`). */
  config: Pick<Config, 'delivery'>;
  /** The time of a tick: what is due by then is released. */
  now: () => number;
}

export function startScheduler(svc: SchedulerDeps): Scheduler {
  const jobs: Cron[] = [];
  const job = (name: string, pattern: string, fn: () => Promise<unknown>) => {
    jobs.push(
      new Cron(pattern, { protect: true, catch: (e) => log.error('job.failed', { job: name, error: String(e) }) }, async () => {
        await fn();
      }),
    );
  };
  // Scheduled sends: every second, read the due head of the schedule index (restart-safe: on the
  // first tick after a restart everything overdue goes out).
  job('scheduled-sends', '* * * * * *', () => releaseDue(svc, svc.now()));
  // Broadcasts: due scheduled ones start, queued ones a restart interrupted resume (the first tick
  // after start-up finds them).
  job('broadcasts', '* * * * * *', () => svc.broadcasts.releaseDue(svc.now()));
  // Contact imports with rows left: those a restart interrupted resume on the first tick.
  job('imports', '* * * * * *', () => svc.imports.releaseDue(svc.now()));
  // The ACME certificate (docs/mail.md §4, "Certificates by ACME"): every minute, pick up one another node renewed, and
  // renew it when due (under its own lock, acme/manager.ts).
  const acme = svc.acme;
  if (acme) job('acme', '0 * * * * *', () => acme.tick());
  // Jobs one node of a cluster at a time must do (store.singleton: an advisory lock in PostgreSQL);
  // on the other nodes the tick is skipped.
  const singleton = (name: string, pattern: string, fn: () => Promise<unknown>) =>
    job(name, pattern, () =>
      svc.store.singleton(name, async () => {
        await fn();
      }),
    );
  // TTL sweep: reads only the expired head of the TTL index.
  singleton('ttl-sweep', '*/1 * * * *', async () => {
    const n = await svc.store.sweep();
    if (n) log.info('ttl.swept', { removed: n });
  });
  // Inbox threads in the trash for 30 days are deleted (inboxes/trash.ts), hourly.
  singleton('inbox-trash', '0 23 * * * *', async () => {
    const n = await emptyTrash(svc.store, svc.inboxes.search, svc.now());
    if (n) log.info('inbox.trash_emptied', { threads: n });
  });
  // Domains awaiting verification or degraded: every 5 minutes; verified ones hourly (inside).
  singleton('domain-recheck', '*/5 * * * *', () => svc.domains.recheckDue());
  // Domain claims whose verification was asked for and whose record was not found yet.
  singleton('claim-recheck', '*/5 * * * *', () => svc.claims.recheckDue());
  // The deliverability checks (docs/deliverability.md §2): on every node (each has its own
  // addresses), every `deliverability.check_interval`, the first a minute after start.
  job('deliverability-checks', '0 * * * * *', () => svc.doctor.runIfDue(svc.now()));
  // TLS-RPT reports (docs/deliverability.md §5): yesterday's, each policy domain's once (a durable
  // marker); hourly, so a node down at midnight or a failed run is made up for within the day.
  singleton('tls-reports', '0 7 * * * *', () => svc.tlsRpt.sendDue(svc.now()));
  // The team request limit is shared by the nodes of a cluster (docs/api.md §6): each takes its
  // share of `limits.requests_per_second`, by the nodes alive now (1 with the embedded store).
  job('rate-share', '*/5 * * * * *', async () => {
    const { nodes } = await svc.store.status();
    svc.limiter.shareAmong(nodes);
  });
  return {
    stop: () => {
      for (const j of jobs) j.stop();
    },
  };
}
