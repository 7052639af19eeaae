// Every resource of the HTTP API, one file each (docs/api.md has a section per resource). A new
// resource is one file here, declared with `resource()` (../platform/route.ts), and one line below.
import type { App, ApiContext } from '../app';
import type { Resource } from '../platform/route';
import { healthRoutes } from './health';
import { dashboardRoutes } from './dashboard';
import { authRoutes } from './auth';
import { teamRoutes } from './team';
import { queueRoutes } from './queue';
import { tlsReportsRoutes } from './tls-reports';
import { prometheusRoutes } from './prometheus';
import { downloadsRoutes } from './downloads';
import { unsubscribeRoutes } from './unsubscribe';
import { sharedRoutes } from './shared';
import { trackingRoutes } from './tracking';
import { receivingResource } from './receiving';
import { metricsRoutes } from './metrics';
import { emailsResource } from './emails';
import { apiKeysResource } from './api-keys';
import { domainClaimsResource } from './domain-claims';
import { domainsResource } from './domains';
import { segmentsRoutes } from './segments';
import { contactImportsRoutes } from './contact-imports';
import { contactsRoutes } from './contacts';
import { contactTopicsRoutes } from './contact-topics';
import { topicsRoutes } from './topics';
import { contactPropertiesRoutes } from './contact-properties';
import { broadcastsRoutes } from './broadcasts';
import { suppressionsResource } from './suppressions';
import { logsRoutes } from './logs';
import { webhooksResource } from './webhooks';
import { templatesResource } from './templates';
import { usageRoutes } from './usage';
import { oauthGrantsRoutes } from './oauth-grants';
import { eventsResource } from './events';
import { automationsResource } from './automations';

/** The resources declared with `resource()`. */
export const RESOURCES: Resource<ApiContext>[] = [
  receivingResource,
  emailsResource,
  webhooksResource,
  apiKeysResource,
  domainClaimsResource,
  domainsResource,
  suppressionsResource,
  templatesResource,
  eventsResource,
  automationsResource,
];

/** Resources not yet declared: they register on the app themselves (a conversion under way). */
export const LEGACY_RESOURCES: ((app: App, svc: ApiContext) => void)[] = [
  healthRoutes,
  dashboardRoutes,
  authRoutes,
  teamRoutes,
  queueRoutes,
  tlsReportsRoutes,
  prometheusRoutes,
  downloadsRoutes,
  unsubscribeRoutes,
  sharedRoutes,
  trackingRoutes,
  metricsRoutes,
  segmentsRoutes,
  contactImportsRoutes,
  contactsRoutes,
  contactTopicsRoutes,
  topicsRoutes,
  contactPropertiesRoutes,
  broadcastsRoutes,
  logsRoutes,
  usageRoutes,
  oauthGrantsRoutes,
];

/** Paths of legacy resources served without an API key (declared routes say so themselves). */
export const LEGACY_PUBLIC = [
  '/',
  '/health',
  '/health/*',
  '/metrics',
  '/metrics/*',
  '/d/*',
  '/t/*',
  '/u/*',
  '/s/*',
  '/dashboard',
  '/dashboard/*',
  '/auth',
  '/auth/*',
];
