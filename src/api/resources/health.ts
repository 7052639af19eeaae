// GET /health — liveness without authentication (docs/api.md §1.1). With the embedded store:
// `200 {"status":"ok"}`. In cluster mode each node also says whether it reaches the database, and
// how many nodes share it; a node that cannot reach it answers 503, so that a load balancer sends
// its traffic to the others until it can again (it accepts nothing meanwhile: README "Cluster mode").
import type { App, ApiContext } from '../app';

export function healthRoutes(app: App, { store }: ApiContext) {
  app.get(
    '/health',
    async ({ set }) => {
      const s = await store.status();
      if (s.backend === 'lmdb') return { status: 'ok' };
      if (!s.reachable) set.status = 503;
      return { status: s.reachable ? 'ok' : 'unavailable', database: s.reachable ? 'reachable' : 'unreachable', nodes: s.nodes };
    },
    { detail: { summary: 'Liveness check (and, in cluster mode, the database)', tags: ['Health'] } },
  );
}
