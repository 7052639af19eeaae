// GET /metrics: operator metrics in Prometheus' text format (README "Monitoring"), behind the
// bearer token of `metrics.token`. Without a token configured the endpoint does not exist (404):
// queue depths and traffic figures are not for everyone who can reach the port.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { App, ApiContext } from '../app';
import { ApiError, errors } from '../../errors';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function prometheusRoutes(app: App, svc: ApiContext) {
  const token = svc.config.metrics.token;
  app.get(
    '/metrics',
    async ({ request }) => {
      if (!token) throw errors.routeNotFound();
      const given = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.trim() ?? '';
      // Digests of equal length: the comparison takes the same time whatever was sent.
      if (!timingSafeEqual(digest(given), digest(token)))
        throw new ApiError(401, 'missing_api_key', 'Missing or wrong metrics token. Send the `metrics.token` as: Authorization: Bearer TOKEN', {
          'www-authenticate': 'Bearer',
        });
      return new Response(await svc.telemetry.text(), { headers: { 'content-type': svc.telemetry.contentType, 'cache-control': 'no-store' } });
    },
    { detail: { summary: 'Operator metrics (Prometheus text format)', tags: ['Operations'], security: [] } },
  );
}
