// placeholder being written
import type { App } from '../app';
import type { Services } from '../../services';
export function segmentsRoutes(_app: App, _svc: Services) {}
