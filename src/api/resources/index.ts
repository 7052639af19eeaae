// Every resource of the HTTP API, one file each (docs/api.md has a section per resource). A new
// resource is one file here, declared with `resource()` (../platform/route.ts), and one line below.
import type { App, ApiContext } from '../app';
import type { Resource } from '../platform/route';
import { healthResource } from './health';
import { dashboardResource } from './dashboard';
import { authResource } from './auth';
import { teamResource } from './team';
import { queueResource } from './queue';
import { tlsReportsResource } from './tls-reports';
import { prometheusResource } from './prometheus';
import { downloadsResource } from './downloads';
import { unsubscribeResource } from './unsubscribe';
import { sharedResource } from './shared';
import { trackingResource } from './tracking';
import { receivingResource } from './receiving';
import { metricsResource } from './metrics';
import { emailsResource } from './emails';
import { apiKeysRoutes } from './api-keys';
import { domainClaimsRoutes } from './domain-claims';
import { domainsRoutes } from './domains';
import { audiencesResource, segmentsResource } from './segments';
import { contactImportsResource } from './contact-imports';
import { contactsResource } from './contacts';
import { contactTopicsResource } from './contact-topics';
import { topicsResource } from './topics';
import { contactPropertiesResource } from './contact-properties';
import { broadcastsResource } from './broadcasts';
import { suppressionsRoutes } from './suppressions';
import { logsResource } from './logs';
import { webhooksResource } from './webhooks';
import { templatesRoutes } from './templates';
import { usageResource } from './usage';
import { oauthGrantsResource } from './oauth-grants';
import { eventsRoutes } from './events';
import { automationsRoutes } from './automations';

/** The resources declared with `resource()`. */
export const RESOURCES: Resource<ApiContext>[] = [
  healthResource,
  dashboardResource,
  authResource,
  teamResource,
  queueResource,
  tlsReportsResource,
  prometheusResource,
  downloadsResource,
  unsubscribeResource,
  sharedResource,
  trackingResource,
  receivingResource,
  metricsResource,
  emailsResource,
  webhooksResource,
  logsResource,
  usageResource,
  oauthGrantsResource,
  segmentsResource,
  audiencesResource,
  contactImportsResource,
  contactsResource,
  contactTopicsResource,
  topicsResource,
  contactPropertiesResource,
  broadcastsResource,
];

/** Resources not yet declared: they register on the app themselves (a conversion under way). */
export const LEGACY_RESOURCES: ((app: App, svc: ApiContext) => void)[] = [
  apiKeysRoutes,
  domainClaimsRoutes,
  domainsRoutes,
  suppressionsRoutes,
  templatesRoutes,
  eventsRoutes,
  automationsRoutes,
];

/** Paths of legacy resources served without an API key (declared routes say so themselves). */
export const LEGACY_PUBLIC: string[] = [];
