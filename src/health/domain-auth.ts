// A sending domain's authentication as receivers evaluate it (docs/deliverability.md §1.4), through
// mailauth and Posthorn's resolver: SPF of the return-path domain for each sending address
// (RFC 7208, evaluated, not string-matched), the DKIM key record against the key Posthorn signs with
// (RFC 6376 §3.6), and the DMARC policy (RFC 7489 §6.3): present, its strength, and where its
// aggregate reports go.
import { spf } from 'mailauth/lib/spf';
import getDmarcRecord from 'mailauth/lib/dmarc/get-dmarc-record';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import { mailauthResolver } from '../dns/mailauth';
import type { DomainRec } from '../store';
import { recordSpecs } from '../domains/records';
import { parseTags } from '../domains/dkim';
import { isOurKey } from '../domains/verify';
import { type CheckResult, fail, pass, warn } from './check';

export async function spfCheck(d: DomainRec, ips: string[], config: Pick<Config, 'smtp'>, dns: Resolver): Promise<CheckResult> {
  const name = `spf:${d.name}`;
  const domain = `${d.custom_return_path}.${d.name}`;
  const record = `v=spf1 a:${config.smtp.hostname} ~all`;
  if (ips.length === 0) return warn(name, `no sending address known: SPF of ${domain} cannot be evaluated`, 'See the sending_addresses check.');
  const failed: string[] = [];
  for (const ip of ips) {
    const r = await spf({
      sender: `bounce@${domain}`,
      ip,
      helo: config.smtp.hostname,
      mta: config.smtp.hostname,
      resolver: mailauthResolver(dns),
      maxElapsedTime: 10_000,
    });
    const result = r.status.result;
    if (result !== 'pass') failed.push(`${ip}: ${result}${r.status.comment ? ` (${r.status.comment})` : ''}`);
  }
  if (failed.length)
    return fail(
      name,
      `SPF of ${domain} does not authorise ${failed.join('; ')}`,
      `Publish the TXT record "${record}" at ${domain} (or add the sending addresses to the one there).`,
    );
  return pass(name, `SPF of ${domain} passes for ${ips.join(', ')}`);
}

export async function dkimCheck(d: DomainRec, config: Pick<Config, 'smtp' | 'public_url'>, dns: Resolver): Promise<CheckResult> {
  const name = `dkim:${d.name}`;
  const spec = recordSpecs(d, { smtpHostname: config.smtp.hostname, publicUrl: config.public_url }).find((s) => s.id === 'DKIM')!;
  const expected = parseTags(spec.view.value);
  let found: Map<string, string>[];
  try {
    found = (await dns.txt(spec.fqdn)).map(parseTags).filter((t) => t.has('p'));
  } catch (e) {
    return warn(name, `${spec.fqdn} could not be looked up (${(e as Error).message})`, 'Check that dns.servers answer, then run the doctor again.');
  }
  if (found.length === 0)
    return fail(
      name,
      `no DKIM key record at ${spec.fqdn}: receivers cannot verify Posthorn's signatures`,
      `Publish the TXT record of GET /domains/${d.id} at ${spec.fqdn}.`,
    );
  if (!found.some((t) => isOurKey(t, expected.get('p')!, expected.get('k') ?? 'rsa')))
    return fail(
      name,
      `the key at ${spec.fqdn} is not the one Posthorn signs with: every signature fails`,
      `Replace the TXT record at ${spec.fqdn} with the one GET /domains/${d.id} lists.`,
    );
  return pass(name, `${spec.fqdn} publishes the key Posthorn signs with`);
}

export async function dmarcCheck(d: DomainRec, dns: Resolver): Promise<CheckResult> {
  const name = `dmarc:${d.name}`;
  let record: Awaited<ReturnType<typeof getDmarcRecord>>;
  try {
    record = await getDmarcRecord(d.name, mailauthResolver(dns));
  } catch (e) {
    return warn(name, `_dmarc.${d.name} could not be looked up (${(e as Error).message})`, 'Check that dns.servers answer, then run the doctor again.');
  }
  if (!record)
    return fail(
      name,
      `no DMARC record for ${d.name}: Gmail and Yahoo require one of bulk senders (since February 2024)`,
      `Publish the TXT record "v=DMARC1; p=none; rua=mailto:dmarc-reports@${d.name}" at _dmarc.${d.name}, then tighten the policy.`,
    );
  const where = record.isOrgRecord ? ` (inherited from ${record.recordDomain})` : '';
  const policy = record.p ?? 'none';
  const parts = [`p=${policy}`, `adkim=${record.adkim ?? 'r'}`, `aspf=${record.aspf ?? 'r'}`, record.rua ? `rua=${record.rua}` : 'no rua'];
  const evidence = `_dmarc of ${d.name}${where}: ${parts.join(', ')}`;
  if (policy === 'none')
    return warn(
      name,
      `${evidence}: monitoring only, spoofed mail is still delivered`,
      'Once reports show your mail aligned for a few weeks, move the policy to p=quarantine, then p=reject.',
    );
  if (!record.rua) return warn(name, `${evidence}: nobody receives aggregate reports`, `Add rua=mailto:dmarc-reports@${d.name} so failures are seen.`);
  return pass(name, evidence);
}
