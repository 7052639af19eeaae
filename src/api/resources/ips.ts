// Sending IPs (Posthorn, README "Sending IPs and warm-up", docs/api.md §19): GET /ips lists the
// addresses of `delivery.ips` — this node's, and those other nodes of a cluster recorded — with
// their pool, EHLO name, reverse DNS (the doctor's last check, or one made now), listing, rotation,
// warm-up and what each sent today per site; POST /ips/{ip}/warmup starts, pauses, resumes or
// completes an address's warm-up. The records are install-wide (delivery/ips.ts); the delivery
// engine of the address's node reads a change within a few seconds.
import type { ApiContext } from '../app';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { allowanceOf, complaintsOn, INSTALL_TEAM } from '../../delivery/ips';
import { listedTargets } from '../../delivery/listings';
import { dayOf } from '../../delivery/warmup';
import { reverseDnsCheck } from '../../health/reverse-dns';
import type { SendingIpRec } from '../../store';
import { IpParams, SendingIp, SendingIpList, WarmupRequest } from '../../schemas/ips';

export const ipsResource = resource('Sending IPs', ({ store, config, doctor, dns }: ApiContext) => {
  /** Every known address: this node's configured ones first, then those other nodes recorded. */
  const known = async (): Promise<SendingIpRec[]> => {
    const stored = new Map((await store.sendingIps.all(INSTALL_TEAM)).map((r) => [r.id, r]));
    const now = new Date().toISOString();
    const out: SendingIpRec[] = config.delivery.ips.map(
      (ip) =>
        stored.get(ip.address) ?? {
          id: ip.address,
          team_id: INSTALL_TEAM,
          created_at: now,
          pool: ip.pool,
          ehlo: ip.ehlo,
          warmup: { state: ip.warmup ? 'warming' : 'off', ramp: ip.warmup, started_at: ip.warmup ? now : null, held: {} },
          out_of_rotation: null,
          sites: {},
        },
    );
    for (const [id, r] of stored) if (!config.delivery.ips.some((i) => i.address === id)) out.push(r);
    return out;
  };

  const ptrOf = async (r: SendingIpRec): Promise<SendingIp['ptr']> => {
    const found = doctor.lastRun()?.checks.find((c) => c.name === `ptr:${r.id}`);
    const check = found ?? (await reverseDnsCheck(r.id, config, dns, r.ehlo));
    return { status: check.status, evidence: check.evidence };
  };

  const view = async (r: SendingIpRec, now: number, listed: ReadonlySet<string>): Promise<SendingIp> => {
    const a = allowanceOf(config.delivery.warmup, r, '', now);
    const today = dayOf(now);
    return {
      object: 'ip',
      address: r.id,
      pool: r.pool,
      ehlo: r.ehlo,
      ptr: await ptrOf(r),
      listed: listed.has(r.id),
      out_of_rotation: r.out_of_rotation && Date.parse(r.out_of_rotation.until) > now ? r.out_of_rotation : null,
      warmup: { state: r.warmup.state, ramp: r.warmup.ramp, started_at: r.warmup.started_at, day: a ? a.day : null },
      sent_today: Object.entries(r.sites)
        .filter(([, c]) => c.day === today)
        .map(([site, c]) => ({
          site,
          sent: c.sent,
          allowance: allowanceOf(config.delivery.warmup, r, site, now)?.daily ?? null,
          held_days: r.warmup.held[site] ?? 0,
          complained: complaintsOn(r, site, today),
          slowed: r.warmup.slowed?.[site] === today,
        })),
    };
  };

  return [
    route({
      method: 'GET',
      path: '/ips',
      summary: 'List sending IPs (Posthorn)',
      description:
        'The addresses of `delivery.ips` (README "Sending IPs and warm-up"): pool, EHLO name, reverse DNS (the doctor\'s last check of it, else one made now), blocklist listing, out of rotation after a failed bind, warm-up state and what each sent today (UTC) per site with its allowance. Empty when none are configured (the kernel chooses).',
      access: 'team',
      body: 'none',
      response: SendingIpList,
      async handler() {
        const now = Date.now();
        const listed = await listedTargets(store);
        const data = await Promise.all((await known()).map((r) => view(r, now, listed)));
        return { object: 'list' as const, has_more: false, data };
      },
    }),
    route({
      method: 'POST',
      path: '/ips/:ip/warmup',
      summary: "Start, pause, resume or complete an IP's warm-up (Posthorn)",
      description:
        "`start`: the ramp (the address's `warmup`, else `new`) starts today; `pause`: its allowance stays today's until `resume`, which moves its schedule on by the days paused; `complete`: no allowance any more. A change that does not apply to the state (resume when not paused…) → 422 `validation_error`; an address not known → 404.",
      access: 'team',
      role: 'admin',
      params: IpParams,
      body: WarmupRequest,
      response: SendingIp,
      async handler({ params, body }) {
        const address = params.ip.toLowerCase();
        const base = (await known()).find((r) => r.id === address);
        if (!base) throw errors.notFound('IP');
        const ramp = config.delivery.ips.find((i) => i.address === address)?.warmup ?? 'new';
        const now = Date.now();
        const iso = new Date(now).toISOString();
        const changed = await store.write(async (tx) => {
          const cur = (await tx.sendingIps.get(INSTALL_TEAM, address)) ?? base;
          const w = cur.warmup;
          let warmup: SendingIpRec['warmup'];
          switch (body.action) {
            case 'start':
              warmup = { state: 'warming', ramp: w.ramp ?? ramp, started_at: iso, paused_at: null, held: {} };
              break;
            case 'pause':
              if (w.state !== 'warming') return `pause needs a warming address (this one is ${w.state})`;
              warmup = { ...w, state: 'paused', paused_at: iso };
              break;
            case 'resume': {
              if (w.state !== 'paused' || !w.started_at || !w.paused_at) return `resume needs a paused address (this one is ${w.state})`;
              // The days paused do not count: the schedule moves on by them.
              const days = dayOf(now) - dayOf(Date.parse(w.paused_at));
              warmup = { ...w, state: 'warming', paused_at: null, started_at: new Date(Date.parse(w.started_at) + days * 86_400_000).toISOString() };
              break;
            }
            default:
              warmup = { ...w, state: 'complete', paused_at: null };
          }
          const next = { ...cur, warmup };
          tx.sendingIps.put(next);
          return next;
        });
        if (typeof changed === 'string') throw errors.validation(`Cannot ${body.action} the warm-up of ${address}: ${changed}.`);
        return view(changed, now, await listedTargets(store));
      },
    }),
  ];
});
