// A small mail world on loopback for end-to-end tests: a test DNS server, a destination MTA (the
// sink) that `dest.test`'s MX points at, and Posthorn resolving through that DNS and delivering to
// the sink, with `example.test` verified for sending (its DKIM key and SPF published in the DNS).
import { authenticate } from 'mailauth';
import { startPosthorn, type Running } from './posthorn';
import { startPosthornSmtp, type RunningSmtp } from './smtp';
import { Resolver } from '../../src/dns/resolver';
import { startDnsServer, type TestDns } from './dns';
import { startSink, type Sink, type SinkOptions } from './sink';
import { verifiedDomain } from './emails';
import type { DomainRec } from '../../src/store';

export interface MailWorld {
  p: Running;
  dns: TestDns;
  sink: Sink;
  /** `example.test`, verified for sending. */
  domain: DomainRec;
  /** Posthorn's SMTP listeners, when asked for. */
  smtp: RunningSmtp | null;
  stop(): Promise<void>;
}

/** `now`: the services' clock (helpers/clock.ts). */
export async function startMailWorld(
  overrides: Record<string, unknown> = {},
  opts: { sink?: SinkOptions; smtp?: boolean; now?: () => number } = {},
): Promise<MailWorld> {
  const dns = await startDnsServer();
  const sink = await startSink(opts.sink);
  // The sink is on loopback: MX hosts on private addresses are refused unless allowed (README "Security").
  const all = { 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true, ...overrides };
  const smtp = opts.smtp ? await startPosthornSmtp(all, { now: opts.now }) : null;
  const p = smtp ? smtp.p : await startPosthorn(all, { now: opts.now });
  const domain = await verifiedDomain(p, 'example.test', { dns });
  dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
  return {
    p,
    dns,
    sink,
    domain,
    smtp,
    async stop() {
      await (smtp ?? p).stop();
      await sink.close();
      await dns.close();
    },
  };
}

/**
 * What a receiving MTA concludes about a message (mailauth: SPF, DKIM, DMARC), looking records up
 * in the test DNS through Posthorn's resolver (Bun's resolveTxt splits long TXT records).
 */
export function authenticateReceived(dns: TestDns, msg: { raw: Buffer; mailFrom: string; helo?: string }) {
  const r = new Resolver([dns.address], 2000, 1);
  const resolver = async (name: string, type: string): Promise<unknown> => {
    const rows =
      type === 'TXT' ? await r.txtStrings(name) : type === 'MX' ? await r.mx(name) : type === 'A' ? await r.a(name) : type === 'AAAA' ? await r.aaaa(name) : [];
    if (!rows.length) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return rows;
  };
  return authenticate(msg.raw, { ip: '127.0.0.1', helo: msg.helo ?? 'mx.posthorn.test', sender: msg.mailFrom, mta: 'mx.dest.test', resolver } as never);
}
