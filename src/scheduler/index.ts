// Background jobs on croner: retention/idempotency sweeps and DNS re-checks. (Due scheduled
// sends join here with the sending core.)
import { Cron } from 'croner';
import type { Services } from '../services';
import { log } from '../log';

export interface Scheduler {
  stop(): void;
}

export function startScheduler(svc: Services): Scheduler {
  const jobs: Cron[] = [];
  const job = (name: string, pattern: string, fn: () => Promise<unknown>) => {
    jobs.push(
      new Cron(pattern, { name, protect: true, catch: (e) => log.error('job.failed', { job: name, error: String(e) }) }, async () => {
        await fn();
      }),
    );
  };
  // TTL sweep: reads only the expired head of the TTL index.
  job('ttl-sweep', '*/1 * * * *', async () => {
    const n = await svc.store.ttl.sweep();
    if (n) log.info('ttl.swept', { removed: n });
  });
  // Domains awaiting verification or degraded: every 5 minutes; verified ones hourly (inside).
  job('domain-recheck', '*/5 * * * *', () => svc.domains.recheckDue());
  return { stop: () => jobs.forEach((j) => j.stop()) };
}
