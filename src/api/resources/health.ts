// GET /health — liveness without authentication (docs/api.md §1.1). With the embedded store:
// `200 {"status":"ok"}`. In cluster mode each node also says whether it reaches the database, and
// how many nodes share it; a node that cannot reach it answers 503, so that a load balancer sends
// its traffic to the others until it can again (it accepts nothing meanwhile: README "Cluster mode").
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { Health } from '../../schemas/operations';

export const healthResource = resource('Health', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/health',
    summary: 'Liveness check (and, in cluster mode, the database)',
    access: 'public',
    body: 'none',
    response: Health,
    async handler({ set }) {
      const s = await store.status();
      if (s.backend === 'lmdb') return { status: 'ok' as const };
      if (!s.reachable) set.status = 503;
      return {
        status: s.reachable ? ('ok' as const) : ('unavailable' as const),
        database: s.reachable ? ('reachable' as const) : ('unreachable' as const),
        nodes: s.nodes,
        // Regions (README "Regions"): mail that waits for a node of its region to be alive.
        ...(s.regions_waiting?.length ? { regions_waiting: s.regions_waiting } : {}),
      };
    },
  }),
]);
