// The delivery queue of a team (docs/api.md §19.6, §19.7), a Posthorn-specific API: GET /queue by
// destination domain — what is waiting, since when, why, for which site, held or suspended — and
// the controls other tools can rely on: hold, release, retry now and cancel all of a team's queued
// mail to one destination. The work is delivery/controls.ts.
import type { ApiContext } from '../app';
import { QueueControls, destinationParam } from '../../delivery/controls';
import { resource, route } from '../platform/route';
import { IgnoredBody } from '../../schemas/common';
import { DestinationParams, QueueControlResult, QueueList } from '../../schemas/operations';

const ERRORS = 'A `destination` that is not a domain name → 422 `invalid_parameter`.';

export const queueResource = resource('Queue', (svc: ApiContext) => {
  const controls = new QueueControls(svc);

  /** One control: the destination's row after it, and how many queue entries it changed. */
  const control = (
    action: 'hold' | 'release' | 'retry' | 'cancel',
    run: (team: string, destination: string) => Promise<number>,
    summary: string,
    description: string,
  ) =>
    route({
      method: 'POST',
      path: `/queue/:destination/${action}`,
      summary: `${summary} (Posthorn)`,
      description: `${description} Answers the destination as GET /queue lists it, with \`affected\` (queue entries changed). ${ERRORS}`,
      access: 'team',
      params: DestinationParams,
      body: IgnoredBody,
      response: QueueControlResult,
      async handler({ caller, params }) {
        const destination = destinationParam(params.destination);
        const affected = await run(caller.team, destination);
        return { ...(await controls.destination(caller.team, destination)), affected };
      },
    });

  return [
    route({
      method: 'GET',
      path: '/queue',
      summary: 'The delivery queue by destination domain (Posthorn)',
      description:
        'Destinations most queued first; held destinations with nothing queued are listed too. `truncated: true` when more than 50,000 entries were there to read.',
      access: 'team',
      body: 'none',
      response: QueueList,
      async handler({ caller }) {
        const { data, truncated } = await controls.destinations(caller.team);
        return { object: 'list' as const, has_more: false as const, data, truncated };
      },
    }),
    control(
      'hold',
      (team, d) => controls.holdDestination(team, d),
      'Hold all queued mail to a destination domain',
      "Nothing of the team's mail to the destination is tried — mail queued later included — until it is released. Allowed with nothing queued. Already held → 422 `validation_error`.",
    ),
    control(
      'release',
      (team, d) => controls.releaseDestination(team, d),
      'Release a held destination domain',
      "The destination's held mail is due at once; emails held one by one stay held. Not held → 422 `validation_error`.",
    ),
    control(
      'retry',
      (team, d) => controls.retryDestination(team, d),
      'Retry all queued mail to a destination domain now',
      "Every queued entry not held is due at once, and a suspension of the destination's site (after a throttling reply) ends. Nothing queued → 404 `not_found`; held → 422 `validation_error`.",
    ),
    control(
      'cancel',
      (team, d) => controls.cancelDestination(team, d),
      'Cancel all queued mail to a destination domain',
      'Every queued recipient of the team at the destination (held ones too) ends `canceled` and leaves the queue. Nothing queued → 404 `not_found`.',
    ),
  ];
});
