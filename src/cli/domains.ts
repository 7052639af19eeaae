// `posthorn domains rotate-dkim`: a DKIM key rotation from the shell (docs/mail.md §2.1), the same
// as POST /domains/{id}/dkim/rotate. Run once, it starts the rotation and prints the records to
// publish; run again once they are published, it looks them up and — when they verify — switches
// signing to the new keys (the running service does the same on its own every 5 minutes). With
// --status it only reports.
import type { Config } from '../config';
import { openStore, storeOptions, type DomainRec, type Store } from '../store';
import { Resolver } from '../dns/resolver';
import { DomainVerifier } from '../domains/verify';
import { dkimView, startRotation } from '../domains/dkim';
import { recordHosts, recordViews } from '../domains/records';
import { createEvents } from '../events/webhooks';
import { ApiError } from '../errors';

export async function rotateDkim(config: Config, opts: { domain: string; ed25519: boolean; status: boolean; team?: string; json: boolean }): Promise<number> {
  const store = await openStore(storeOptions(config));
  const dns = new Resolver(config.dns.servers);
  // Its changes are a domain's like any other: logged, and announced to webhooks (domain.updated).
  const events = createEvents();
  try {
    const found = await findDomain(store, opts.domain.trim().toLowerCase(), opts.team);
    if (typeof found === 'string') {
      process.stderr.write(`posthorn: ${found}\n`);
      return 1;
    }
    let d = found;
    const started = !opts.status && !d.dkim_next;
    if (started) d = await startRotation(store, { events, hosts: recordHosts(config) }, d.team_id, d.id, { ed25519: opts.ed25519 });
    if (d.dkim_next) {
      // Look the records up now (through dns.servers): a rotation whose records are there switches.
      await new DomainVerifier(store, dns, config, events).check(d.team_id, d.id);
      d = (await store.domains.get(d.team_id, d.id)) ?? d;
    }
    report(d, config, started, opts.json);
    return 0;
  } catch (e) {
    if (e instanceof ApiError) {
      process.stderr.write(`posthorn: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    dns.close();
    await store.close();
  }
}

async function findDomain(store: Store, name: string, team?: string): Promise<DomainRec | string> {
  const d = await store.domains.find('name', name);
  if (!d || (team && d.team_id !== team)) return `no domain ${name}${team ? ` in team ${team}` : ''}`;
  return d;
}

function report(d: DomainRec, config: Config, started: boolean, json: boolean): void {
  const dkim = dkimView(d);
  const records = recordViews(d, recordHosts(config)).records.filter((r) => r.record === 'DKIM');
  if (json) {
    process.stdout.write(`${JSON.stringify({ domain: d.name, id: d.id, dkim, records })}\n`);
    return;
  }
  const out: string[] = [];
  if (dkim.rotation) {
    out.push(`${started ? 'Started a DKIM rotation' : 'DKIM rotation pending'} for ${d.name}: publish these TXT records, then run this command again`);
    out.push('(the running service also looks them up every 5 minutes and switches signing once they verify):');
    for (const r of records.filter((r) => [dkim.rotation!.selector, dkim.rotation!.ed25519_selector].includes(r.name.replace(/\._domainkey$/, ''))))
      out.push(`  ${r.name}.${d.name}  TXT  "${r.value}"  (${r.status})`);
  } else {
    out.push(
      `${d.name} signs with selector ${dkim.selector}${dkim.ed25519_selector ? ` and ${dkim.ed25519_selector} (Ed25519)` : ''} (${dkim.algorithms.join(', ')}).`,
    );
  }
  if (dkim.previous)
    out.push(
      dkim.previous.safe_to_remove
        ? `Retired selector(s) ${dkim.previous.selectors.join(', ')}: safe to remove their records now.`
        : `Retired selector(s) ${dkim.previous.selectors.join(', ')}: keep their records published until ${dkim.previous.remove_after}.`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
}
