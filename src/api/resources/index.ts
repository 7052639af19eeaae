// Every resource of the HTTP API, one file each (docs/api.md has a section per resource). A new
// resource is one file here, declared with `resource()` (../platform/route.ts), its schemas in
// src/schemas/, and one line below.
import type { ApiContext } from '../app';
import type { Resource } from '../platform/route';
import { healthResource } from './health';
import { dashboardResource } from './dashboard';
import { authResource } from './auth';
import { liveResource } from './live';
import { teamResource } from './team';
import { auditLogResource } from './audit-log';
import { queueResource } from './queue';
import { tlsReportsResource } from './tls-reports';
import { deliverabilityResource } from './deliverability';
import { ipsResource } from './ips';
import { regionsResource } from './regions';
import { dmarcResource } from './dmarc';
import { prometheusResource } from './prometheus';
import { downloadsResource } from './downloads';
import { unsubscribeResource } from './unsubscribe';
import { sharedResource } from './shared';
import { trackingResource } from './tracking';
import { receivingResource } from './receiving';
import { metricsResource } from './metrics';
import { emailsResource } from './emails';
import { apiKeysResource } from './api-keys';
import { domainClaimsResource } from './domain-claims';
import { domainsResource } from './domains';
import { audiencesResource, segmentsResource } from './segments';
import { contactImportsResource } from './contact-imports';
import { contactsResource } from './contacts';
import { contactTopicsResource } from './contact-topics';
import { topicsResource } from './topics';
import { contactPropertiesResource } from './contact-properties';
import { broadcastsResource } from './broadcasts';
import { suppressionsResource } from './suppressions';
import { logsResource } from './logs';
import { webhooksResource } from './webhooks';
import { templatesResource } from './templates';
import { usageResource } from './usage';
import { smtpSettingsResource } from './smtp-settings';
import { oauthGrantsResource } from './oauth-grants';
import { eventsResource } from './events';
import { automationsResource } from './automations';
import { acmeResource } from './acme';
import { inboxesResource } from './inboxes';
import { inboxAgentResource } from './inbox-agent';
import { inboxAgentRunsResource } from './inbox-agent-runs';
import { inboxLabelsResource } from './inbox-labels';
import { inboxThreadsResource } from './inbox-threads';
import { inboxThreadEmailsResource } from './inbox-thread-emails';
import { inboxDraftsResource } from './inbox-drafts';

/** The resources, in the order the OpenAPI document and docs/api.md §26 list them. */
export const RESOURCES: Resource<ApiContext>[] = [
  healthResource,
  dashboardResource,
  authResource,
  liveResource,
  teamResource,
  auditLogResource,
  queueResource,
  tlsReportsResource,
  deliverabilityResource,
  ipsResource,
  regionsResource,
  dmarcResource,
  prometheusResource,
  downloadsResource,
  unsubscribeResource,
  sharedResource,
  trackingResource,
  receivingResource,
  metricsResource,
  emailsResource,
  apiKeysResource,
  domainClaimsResource,
  domainsResource,
  segmentsResource,
  audiencesResource,
  contactImportsResource,
  contactsResource,
  contactTopicsResource,
  topicsResource,
  contactPropertiesResource,
  broadcastsResource,
  suppressionsResource,
  logsResource,
  webhooksResource,
  templatesResource,
  usageResource,
  smtpSettingsResource,
  oauthGrantsResource,
  eventsResource,
  automationsResource,
  acmeResource,
  inboxesResource,
  inboxLabelsResource,
  inboxThreadsResource,
  inboxThreadEmailsResource,
  inboxDraftsResource,
  inboxAgentResource,
  inboxAgentRunsResource,
];
