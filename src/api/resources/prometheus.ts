// GET /metrics: operator metrics in Prometheus' text format (README "Monitoring"), behind the
// bearer token of `metrics.token`. Without a token configured the endpoint does not exist (404):
// queue depths and traffic figures are not for everyone who can reach the port.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { ApiContext } from '../app';
import { ApiError, errors } from '../../errors';
import { resource, route } from '../platform/route';

const digest = (s: string) => createHash('sha256').update(s).digest();

export const prometheusResource = resource('Operations', (svc: ApiContext) => {
  const token = svc.config.metrics.token;
  return [
    route({
      method: 'GET',
      path: '/metrics',
      summary: 'Operator metrics (Prometheus text format)',
      description: 'Public to the API-key check: it takes the `metrics.token` as its bearer token instead.',
      access: 'public',
      body: 'none',
      response: { raw: 'text/plain', description: "Prometheus' text exposition format" },
      async handler({ request }) {
        if (!token) throw errors.routeNotFound();
        const given = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.trim() ?? '';
        // Digests of equal length: the comparison takes the same time whatever was sent.
        if (!timingSafeEqual(digest(given), digest(token)))
          throw new ApiError(401, 'missing_api_key', 'Missing or wrong metrics token. Send the `metrics.token` as: Authorization: Bearer TOKEN', {
            'www-authenticate': 'Bearer',
          });
        return new Response(await svc.telemetry.text(), { headers: { 'content-type': svc.telemetry.contentType, 'cache-control': 'no-store' } });
      },
    }),
  ];
});
