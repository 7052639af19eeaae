// An MTA-STS policy host for tests (RFC 8461 §3.2): one HTTPS server on 127.0.0.1 (a free port,
// given to Posthorn as `delivery.mta_sts.port`) answering GET /.well-known/mta-sts.txt for every
// `mta-sts.<domain>` by its Host header, with a certificate from the test CA (helpers/pki.ts).
//
//   const sts = await startPolicyServer(await ca.issue(['mta-sts.a.test', 'mta-sts.b.test']));
//   sts.serve('a.test', 'version: STSv1\nmode: enforce\nmx: mx.a.test\nmax_age: 86400\n');
//   sts.serve('b.test', null, { status: 404 });            // no policy file
//   sts.fetches('a.test')                                  // how often a.test's policy was fetched
export interface PolicyServer {
  port: number;
  serve(domain: string, policy: string | null, opts?: { status?: number; type?: string }): void;
  fetches(domain: string): number;
  close(): Promise<void>;
}

export async function startPolicyServer(tls: { key: string; cert: string }): Promise<PolicyServer> {
  const policies = new Map<string, { body: string | null; status: number; type: string }>();
  const fetched = new Map<string, number>();
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls,
    fetch(req) {
      const host = (req.headers.get('host') ?? '').replace(/:\d+$/, '').toLowerCase();
      const domain = host.replace(/^mta-sts\./, '');
      if (new URL(req.url).pathname !== '/.well-known/mta-sts.txt' || !host.startsWith('mta-sts.')) return new Response('not found', { status: 404 });
      fetched.set(domain, (fetched.get(domain) ?? 0) + 1);
      const p = policies.get(domain);
      if (!p) return new Response('not found', { status: 404 });
      return new Response(p.body, { status: p.status, headers: { 'content-type': p.type } });
    },
  });
  return {
    port: server.port!,
    serve(domain, policy, opts = {}) {
      policies.set(domain, { body: policy, status: opts.status ?? 200, type: opts.type ?? 'text/plain' });
    },
    fetches: (domain) => fetched.get(domain) ?? 0,
    async close() {
      await server.stop(true);
    },
  };
}
