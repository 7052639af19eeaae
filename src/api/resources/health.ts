// GET /health — liveness without authentication (docs/api.md §1.1).
import type { App } from '../app';

export function healthRoutes(app: App) {
  app.get('/health', () => ({ status: 'ok' }), { detail: { summary: 'Liveness check', tags: ['Health'] } });
}
