// The single binary delivers (README "Build and install the binary"): what scripts/build.ts
// bundles — the main code, the back office and DKIM signing threads as entrypoints of their own,
// shared chunks, the native addons — must run together, which tests from source cannot show. A
// real `posthorn serve` of the built executable verifies a domain through the test DNS and
// delivers to a sink, which checks the DKIM signature made by the binary's signing thread.
//
// The executable: $POSTHORN_TEST_BINARY (.ci/run sets it to the dist/posthorn it just built and
// smoke-tested), else one built here from this checkout.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { serveChild, type ServeChild, verifiedDomain } from '../helpers/child';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { until } from '../helpers/wait';
import { authenticateReceived } from '../helpers/world';

const ROOT = resolve(import.meta.dir, '../..');
const dir = mkdtempSync(join(tmpdir(), 'posthorn-binary-'));
let dns: TestDns;
let sink: Sink;
let server: ServeChild;

function binary(): string {
  const given = process.env.POSTHORN_TEST_BINARY;
  if (given) return resolve(ROOT, given);
  const outfile = join(dir, 'posthorn');
  const built = Bun.spawnSync([process.execPath, join(ROOT, 'scripts/build.ts'), '--outfile', outfile], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  if (built.exitCode !== 0) throw new Error(`scripts/build.ts failed: ${built.stderr.toString()}`);
  return outfile;
}

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSink(); // STARTTLS offered: the binary's TLS client runs too
  server = await serveChild(
    join(dir, 'data'),
    {
      POSTHORN_DNS_SERVERS: dns.address,
      POSTHORN_DELIVERY_MX_PORT: String(sink.port),
      POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
      TMPDIR: dir, // where the binary unpacks its native addons
    },
    { binary: binary() },
  );
  await server.start();
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await sink?.close();
  await dns?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the built binary', () => {
  test('verifies a domain, signs with DKIM in its signing thread and delivers', async () => {
    await verifiedDomain(server, dns.zone, 'binary.test');
    const sent = await Promise.all(
      [1, 2, 3].map((n) =>
        server.api('POST', '/emails', {
          from: 'Binary <hello@binary.test>',
          to: `reader${n}@dest.test`,
          subject: `From the binary ${n}`,
          html: `<p>Message ${n}</p>`,
          attachments: [{ filename: 'note.txt', content: Buffer.from(`attachment ${n}`).toString('base64') }],
        }),
      ),
    );
    for (const s of sent) expect(s.status).toBe(200);
    await until(() => sink.messages.length >= 3, 'three messages at the sink', 60_000);
    for (const m of sink.messages) {
      expect(m.secure).toBe(true);
      const verdict = await authenticateReceived(dns, m);
      expect(verdict.dkim.results[0]?.status.result).toBe('pass');
      expect(verdict.dkim.results[0]?.signingDomain).toBe('binary.test');
    }
    const ids = sent.map((s) => s.body.id as string);
    await until(async () => {
      const states = await Promise.all(ids.map(async (id) => (await server.api('GET', `/emails/${id}`)).body.last_event));
      return states.every((e) => e === 'delivered');
    }, 'the three emails delivered');
  }, 120_000);
});
