// GET /auth/session/events (docs/api.md §19.15): the signed-in session's live stream of its team's
// changes, as server-sent events. A session route like the others (cookie and CSRF header); it
// reads and changes nothing, so it is safe to hold open.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';

export const liveResource = resource('Dashboard', ({ live, auth }: ApiContext) => [
  route({
    method: 'GET',
    path: '/auth/session/events',
    summary: "The session's live stream: its team's changes, as server-sent events",
    access: 'session',
    body: 'none',
    response: { raw: 'text/event-stream', description: 'Server-sent events: `ready`, then `change` {topic, id}, and `resync` before it ends' },
    handler: ({ caller }) => {
      const { session } = caller;
      const stream = live.open({ team: caller.team, id: session.id, live: () => auth.sessions.stillLive(session) });
      return new Response(stream.body, {
        headers: {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // A buffering reverse proxy would hold the events back (nginx reads this header).
          'x-accel-buffering': 'no',
        },
      });
    },
  }),
]);
