// `posthorn doctor [--json]` (docs/deliverability.md §1): every deliverability check once, printed
// as a list (or `{"checks":[…]}` with --json); exit 1 when a check fails, 0 otherwise. It reads the
// domains from the store (safe while `serve` runs) and asks `dns.servers`.
import type { Config } from '../config';
import { openStore, storeOptions } from '../store';
import { Resolver } from '../dns/resolver';
import { Doctor, worst, type CheckResult } from '../health';
import { storedCertificate } from '../acme/manager';

const MARK = { pass: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

export async function doctor(config: Config, opts: { json: boolean }): Promise<number> {
  const store = await openStore(storeOptions(config));
  const dns = new Resolver(config.dns.servers);
  try {
    const run = await new Doctor({ config, dns, domains: () => store.domains.everything(), acme: () => storedCertificate(store, config) }).run();
    const checks = run.checks.map(({ domain: _, ...c }) => c);
    if (opts.json) process.stdout.write(`${JSON.stringify({ checks })}\n`);
    else process.stdout.write(report(checks));
    return worst(checks) === 'fail' ? 1 : 0;
  } finally {
    dns.close();
    await store.close();
  }
}

function report(checks: CheckResult[]): string {
  const count = (s: string) => checks.filter((c) => c.status === s).length;
  const out = [`posthorn doctor: ${checks.length} checks, ${count('pass')} passed, ${count('warn')} warnings, ${count('fail')} failed`, ''];
  for (const c of checks) {
    out.push(`${MARK[c.status]}  ${c.name}`, `      ${c.evidence}`);
    if (c.fix) out.push(`      fix: ${c.fix}`);
  }
  return `${out.join('\n')}\n`;
}
