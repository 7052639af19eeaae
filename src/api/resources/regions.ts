// Regions (Posthorn, README "Cluster mode" → "Regions", docs/api.md §19.18): GET /regions lists
// the regions a domain may name — Resend's, the operator's `cluster.regions` and this node's
// `cluster.region` (domains/create.ts `placementOf`, the one list POST and PATCH /domains check
// against) — and which of them wait because no node of theirs is alive (the store's status, as
// GET /health says). The dashboard's domain page offers them.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { placementOf } from '../../domains/create';
import { RegionList } from '../../schemas/ips';

export const regionsResource = resource('Regions', ({ store, config }: ApiContext) => [
  route({
    method: 'GET',
    path: '/regions',
    summary: 'List the regions a domain may name (Posthorn)',
    description:
      "The regions of POST and PATCH /domains' `region`: Resend's names and those the operator defines (`cluster.regions`, `cluster.region`), each with `defined` (the operator's) and `waiting` (in cluster mode: no node of the region is alive, so its mail waits).",
    access: 'team',
    body: 'none',
    response: RegionList,
    async handler() {
      const s = await store.status();
      const waiting = new Set(s.regions_waiting ?? []);
      const data = placementOf(config).regions.map((name) => ({
        object: 'region' as const,
        name,
        defined: config.cluster.regions.includes(name) || config.cluster.region === name,
        waiting: waiting.has(name),
      }));
      return { object: 'list' as const, has_more: false as const, data };
    },
  }),
]);
