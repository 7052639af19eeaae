// The delivery queue of a team (docs/api.md §19.6, §19.7), a Posthorn-specific API: GET /queue by
// destination domain — what is waiting, since when, why, for which site, held or suspended — and
// the controls other tools can rely on: hold, release, retry now and cancel all of a team's queued
// mail to one destination. The work is delivery/controls.ts.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { QueueControls, destinationParam } from '../../delivery/controls';

const tags = ['Queue'];

const ERRORS = 'A `destination` that is not a domain name → 422 `invalid_parameter`.';

export function queueRoutes(app: App, svc: ApiContext) {
  const controls = new QueueControls(svc);

  app.get(
    '/queue',
    async ({ request }) => {
      const { data, truncated } = await controls.destinations(caller(request).team);
      return { object: 'list', has_more: false, data, truncated };
    },
    {
      detail: {
        summary: 'The delivery queue by destination domain (Posthorn)',
        description:
          'List of `{object:"queue_destination", destination, site, queued, recipients, retrying, held, held_emails, oldest_queued_at, next_attempt_at, last_error, suspended_until}`, most queued first; held destinations with nothing queued are listed too. `truncated: true` when more than 50,000 entries were there to read.',
        tags,
      },
    },
  );

  /** One control: the destination's row after it, and how many queue entries it changed. */
  const control = (
    action: 'hold' | 'release' | 'retry' | 'cancel',
    run: (team: string, destination: string) => Promise<number>,
    summary: string,
    description: string,
  ) =>
    app.post(
      `/queue/:destination/${action}`,
      async ({ request, params }) => {
        const { team } = caller(request);
        const destination = destinationParam(params.destination);
        const affected = await run(team, destination);
        return { ...(await controls.destination(team, destination)), affected };
      },
      {
        detail: {
          summary: `${summary} (Posthorn)`,
          description: `${description} Answers the destination as GET /queue lists it, with \`affected\` (queue entries changed). ${ERRORS}`,
          tags,
        },
      },
    );

  control(
    'hold',
    (team, d) => controls.holdDestination(team, d),
    'Hold all queued mail to a destination domain',
    "Nothing of the team's mail to the destination is tried — mail queued later included — until it is released. Allowed with nothing queued. Already held → 422 `validation_error`.",
  );
  control(
    'release',
    (team, d) => controls.releaseDestination(team, d),
    'Release a held destination domain',
    "The destination's held mail is due at once; emails held one by one stay held. Not held → 422 `validation_error`.",
  );
  control(
    'retry',
    (team, d) => controls.retryDestination(team, d),
    'Retry all queued mail to a destination domain now',
    "Every queued entry not held is due at once, and a suspension of the destination's site (after a throttling reply) ends. Nothing queued → 404 `not_found`; held → 422 `validation_error`.",
  );
  control(
    'cancel',
    (team, d) => controls.cancelDestination(team, d),
    'Cancel all queued mail to a destination domain',
    'Every queued recipient of the team at the destination (held ones too) ends `canceled` and leaves the queue. Nothing queued → 404 `not_found`.',
  );
}
