// The warning `serve` prints at every start when the configuration cannot deliver
// (docs/deliverability.md §1.1): checks that need no network, so they are never skipped.
import type { Config } from '../config';
import { type CheckResult, fail } from './check';
import { publicUrlCheck, unusableHostname } from './host';

export function startupProblems(config: Pick<Config, 'smtp' | 'public_url'>, domains: number): CheckResult[] {
  const out: CheckResult[] = [];
  const why = unusableHostname(config.smtp.hostname);
  if (why)
    out.push(
      fail(
        'smtp_hostname',
        `smtp.hostname = "${config.smtp.hostname}" ${why}: new domains would publish MX and SPF records pointing at it, and receivers refuse such an EHLO`,
        "Set smtp.hostname (POSTHORN_SMTP_HOSTNAME) to this server's public name, e.g. mail.example.com.",
      ),
    );
  const url = publicUrlCheck(config, domains);
  // A loopback public_url is fine for a first try on this machine, not once domains exist.
  if (url.status === 'fail') out.push(url);
  return out;
}

/** The block printed on stdout: framed, one problem per paragraph, with its fix. */
export function formatStartupWarning(problems: CheckResult[]): string {
  if (problems.length === 0) return '';
  const lines = ['', '!! Posthorn cannot deliver mail to the Internet with this configuration:', ''];
  for (const p of problems) lines.push(`   - ${p.evidence}`, `     Fix: ${p.fix}`, '');
  lines.push('   Run `posthorn doctor` for every check (reverse DNS, SPF/DKIM/DMARC, certificate, port 25, blocklists).', '');
  return `${lines.join('\n')}\n`;
}
