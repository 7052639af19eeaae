// GET /health — liveness without authentication (api-reference §1.1).
import type { App } from '../app';

export function healthRoutes(app: App) {
  app.get('/health', () => ({ status: 'ok' }), { detail: { summary: 'Liveness check', tags: ['Health'] } });
}
