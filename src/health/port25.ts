// Outbound port 25 (docs/deliverability.md §1.6): many VPS providers block it until asked, and then
// every delivery times out. The check opens a TCP connection to an MX the operator names
// (`deliverability.port25_probe`) and reads its greeting; nothing is sent. No MX is guessed: with
// none configured the check says it was skipped.
import { connect } from 'node:net';
import type { Config } from '../config';
import { type CheckResult, pass, warn, fail } from './check';

export async function port25Check(config: Pick<Config, 'deliverability' | 'delivery'>, timeoutMs = 10_000): Promise<CheckResult> {
  const name = 'outbound_port_25';
  if (config.delivery.mode === 'relay') return pass(name, 'not needed: delivery.mode = relay hands every message to the relay');
  const probe = config.deliverability.port25_probe;
  if (!probe)
    return warn(
      name,
      'not checked: no deliverability.port25_probe is configured',
      'Set deliverability.port25_probe to an MX host (e.g. gmail-smtp-in.l.google.com) to have the doctor prove port 25 is open.',
    );
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(probe)!;
  const host = m[1];
  const port = Number(m[2] ?? 25);
  const outcome = await new Promise<{ ok: true; greeting: string } | { ok: false; why: string }>((resolve) => {
    const socket = connect({ host, port });
    const done = (r: { ok: true; greeting: string } | { ok: false; why: string }) => {
      socket.destroy();
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => done({ ok: false, why: `no answer within ${timeoutMs / 1000} s` }), timeoutMs);
    socket.once('data', (b) => done({ ok: true, greeting: b.toString('latin1').split('\r\n')[0].slice(0, 200) }));
    socket.once('error', (e) => done({ ok: false, why: (e as NodeJS.ErrnoException).code ?? e.message }));
  });
  if (!outcome.ok)
    return fail(
      name,
      `could not reach ${host}:${port}: ${outcome.why}`,
      'Ask your provider to open outbound port 25 (many block it on new servers), or set delivery.mode = "relay".',
    );
  return pass(name, `${host}:${port} answered "${outcome.greeting}"`);
}
