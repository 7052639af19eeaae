// A small mail world on loopback for end-to-end tests: a test DNS server, a destination MTA (the
// sink) that `dest.test`'s MX points at, and Posthorn resolving through that DNS and delivering to
// the sink, with `example.test` verified for sending (its DKIM key and SPF published in the DNS).
import { startPosthorn, type Running } from './posthorn';
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
  stop(): Promise<void>;
}

export async function startMailWorld(overrides: Record<string, unknown> = {}, sinkOptions: SinkOptions = {}): Promise<MailWorld> {
  const dns = await startDnsServer();
  const sink = await startSink(sinkOptions);
  const p = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, ...overrides });
  const domain = await verifiedDomain(p, 'example.test', { dns });
  dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
  return {
    p,
    dns,
    sink,
    domain,
    async stop() {
      await p.stop();
      await sink.close();
      await dns.close();
    },
  };
}
