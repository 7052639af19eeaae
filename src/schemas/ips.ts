// Sending IPs on the wire (Posthorn, README "Sending IPs and warm-up", docs/api.md §19): GET /ips
// and POST /ips/{ip}/warmup.
import { Type } from '@sinclair/typebox';
import { List, Nullable, Timestamp, type Static } from './common';
import { OneOf } from './literals';

const WarmupState = OneOf(['off', 'warming', 'paused', 'complete'] as const, {
  description: '`off`: no allowance; `warming`: the ramp limits it; `paused`: the ramp holds at its pause day; `complete`: no allowance any more',
});

export const SendingIp = Type.Object({
  object: Type.Literal('ip'),
  address: Type.String(),
  pool: Type.String(),
  ehlo: Type.String({ description: 'The EHLO name said from it; its PTR should name it and resolve back (FCrDNS)' }),
  ptr: Type.Object({
    status: OneOf(['pass', 'warn', 'fail', 'skipped'] as const, { description: "The doctor's reverse DNS check of the address" }),
    evidence: Type.String(),
  }),
  listed: Type.Boolean({ description: 'On a DNS blocklist: out of rotation' }),
  out_of_rotation: Nullable(
    Type.Object({ reason: Type.String(), at: Timestamp, until: Timestamp }, { description: 'A failed bind took it out of rotation until then' }),
  ),
  warmup: Type.Object({
    state: WarmupState,
    ramp: Nullable(OneOf(['new', 'established'] as const)),
    started_at: Nullable(Timestamp),
    day: Nullable(Type.Integer({ description: 'Day of the ramp (0: its first)' })),
  }),
  sent_today: Type.Array(
    Type.Object({
      site: Type.String({ description: 'A shaping site (docs/mail.md §3.1)' }),
      sent: Type.Integer(),
      allowance: Nullable(Type.Integer({ description: "Today's allowance at the site while warming; null: no limit" })),
      held_days: Type.Integer({ description: 'Days its ramp held after a troubled day' }),
      complained: Type.Integer({ description: 'Complaints about mail it delivered there, arrived today' }),
      slowed: Type.Boolean({ description: "Today follows a troubled day: its hourly cap is a sixteenth of the day's allowance" }),
    }),
  ),
});
export type SendingIp = Static<typeof SendingIp>;

export const SendingIpList = List(SendingIp);

export const IpParams = Type.Object({ ip: Type.String({ description: 'An address of `delivery.ips`' }) });

export const WarmupRequest = Type.Object({
  action: OneOf(['start', 'pause', 'resume', 'complete'] as const, { error: 'The `action` field must be one of start, pause, resume, complete.' }),
});

/** GET /regions (docs/api.md §19.18): a region domains may name. */
export const Region = Type.Object({
  object: Type.Literal('region'),
  name: Type.String(),
  defined: Type.Boolean({ description: 'Defined by the operator (`cluster.regions`, `cluster.region`); else one of Resend’s names' }),
  waiting: Type.Boolean({ description: 'No node of the region is alive: its mail waits (cluster mode)' }),
});
export type Region = Static<typeof Region>;

export const RegionList = List(Region);
