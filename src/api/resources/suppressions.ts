// placeholder being written
import type { App } from '../app';
import type { Services } from '../../services';
export function suppressionsRoutes(_app: App, _svc: Services) {}
