// DNS lookups through the configured servers (`dns.servers`, SPEC.md §4), or the system's.
// On Bun a NODATA answer surfaces as ENOTFOUND, indistinguishable from NXDOMAIN, so both are
// "no records" (STACK-NOTES.md); only real failures (timeouts, SERVFAIL) are errors.
import { promises as dns } from 'node:dns';

const NO_RECORDS = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

export class DnsError extends Error {
  constructor(readonly code: string, readonly host: string) {
    super(`DNS lookup of ${host} failed: ${code}`);
  }
}

export class Resolver {
  private readonly r: dns.Resolver;

  constructor(servers: string[], timeoutMs = 5000) {
    this.r = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
    if (servers.length) this.r.setServers(servers);
  }

  private async wrap<T>(host: string, fn: () => Promise<T[]>): Promise<T[]> {
    try {
      return await fn();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (NO_RECORDS.has(code)) return [];
      throw new DnsError(code, host);
    }
  }

  /** TXT records, each one's strings joined (RFC 7208 §3.3 / RFC 6376 §3.6.2.2). */
  async txt(host: string): Promise<string[]> {
    return (await this.wrap(host, () => this.r.resolveTxt(host))).map((parts) => parts.join(''));
  }

  async mx(host: string): Promise<{ exchange: string; priority: number }[]> {
    return this.wrap(host, () => this.r.resolveMx(host));
  }

  async a(host: string): Promise<string[]> {
    return this.wrap(host, () => this.r.resolve4(host));
  }

  async aaaa(host: string): Promise<string[]> {
    return this.wrap(host, () => this.r.resolve6(host));
  }
}
