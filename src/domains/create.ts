// A new domain of a team (docs/api.md §9.1): its options checked, its name's availability, and the
// record with a fresh DKIM key. Shared by POST /domains and a completed domain claim (claims.ts),
// which creates the claimed domain the same way.
import type { Config } from '../config';
import type { DomainRec, StoreReader } from '../store';
import type { CreateDomainRequest } from '../schemas/domains';
import { ApiError, errors } from '../errors';
import { nowIso } from '../ids';
import { REGIONS } from '../schemas/domains';
import { generateDkimKey } from './dkim';
import { normaliseDomainName, checkReturnPath, checkTrackingSubdomain } from './validate';

/**
 * Where a domain's mail may be sent from: the regions a domain may name (Resend's, the operator's
 * `cluster.regions` and this node's `cluster.region`) and the pools of sending IPs (`default`
 * and those of `delivery.ips`). README "Sending IPs and warm-up", "Cluster mode", "Regions".
 */
export interface Placement {
  regions: readonly string[];
  pools: readonly string[];
}

export function placementOf(config: Pick<Config, 'delivery' | 'cluster'>): Placement {
  const regions = new Set<string>([...REGIONS, ...config.cluster.regions]);
  if (config.cluster.region) regions.add(config.cluster.region);
  return { regions: [...regions], pools: [...new Set(['default', ...config.delivery.ips.map((i) => i.pool)])] };
}

const RESEND_ONLY: Placement = { regions: REGIONS, pools: ['default'] };

/** A region the domain may name; Resend's own error name (`invalid_region`) when it may not. */
export function checkRegion(region: string, placement: Placement): string {
  if (!placement.regions.includes(region)) throw new ApiError(422, 'invalid_region', `The \`region\` field must be one of ${placement.regions.join(', ')}.`);
  return region;
}

/** A pool of sending IPs the domain may name (422 `validation_error` otherwise). */
export function checkPool(pool: string, placement: Placement): string {
  if (!placement.pools.includes(pool)) throw errors.validation(`The \`pool\` field must be one of ${placement.pools.join(', ')}.`);
  return pool;
}

/** The settings of a new domain from POST /domains's body (or a claim's), every field's meaning checked (422 naming the first bad one). */
export function domainSettings(body: CreateDomainRequest, placement: Placement = RESEND_ONLY) {
  const name = normaliseDomainName(body.name);
  // Resend's own error name for a region it does not serve; a region that is no string is the schema's field error.
  const region = checkRegion(body.region ?? 'us-east-1', placement);
  const pool = body.pool !== undefined ? checkPool(body.pool, placement) : undefined;
  const custom_return_path = body.custom_return_path !== undefined ? checkReturnPath(body.custom_return_path) : 'send';
  const tracking_subdomain = typeof body.tracking_subdomain === 'string' ? checkTrackingSubdomain(body.tracking_subdomain, custom_return_path) : null;
  const capabilities = { sending: body.capabilities?.sending ?? 'enabled', receiving: body.capabilities?.receiving ?? 'disabled' } as const;
  if (capabilities.sending === 'disabled' && capabilities.receiving === 'disabled')
    throw errors.validation('At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.');
  return {
    name,
    region,
    ...(pool && pool !== 'default' ? { pool } : {}),
    custom_return_path,
    open_tracking: body.open_tracking ?? false,
    click_tracking: body.click_tracking ?? false,
    tracking_subdomain,
    tls: body.tls ?? ('opportunistic' as const),
    capabilities,
  };
}

export type DomainSettings = ReturnType<typeof domainSettings>;

/**
 * May `team` have a domain called `name`? Not when anybody registered the name (but `holder`, a
 * domain being handed over), nor when another team owns a domain above it (its subdomains,
 * return-path hosts included, receive that team's bounces and mail), nor when its own return-path
 * host is another team's domain.
 */
export async function nameAvailable(r: StoreReader, name: string, returnPath: string, team: string, holder?: DomainRec): Promise<boolean> {
  const same = await r.domains.find('name', name);
  if (same && same.id !== holder?.id) return false;
  const labels = name.split('.');
  for (let i = 1; i < labels.length - 1; i++) {
    const parent = await r.domains.find('name', labels.slice(i).join('.'));
    if (parent && parent.team_id !== team) return false;
  }
  const rp = await r.domains.find('name', `${returnPath}.${name}`);
  return !rp || rp.team_id === team;
}

/** The 403 of a name that is taken (docs/api.md §9.1). */
export const nameTaken = (name: string) => errors.validation(`The \`${name}\` domain has been registered already.`, 403);

/** A new domain record with a fresh DKIM key (RSA-2048). */
export async function newDomain(team: string, id: string, s: DomainSettings): Promise<DomainRec> {
  return {
    id,
    team_id: team,
    created_at: nowIso(),
    ...s,
    status: 'not_started',
    dkim: await generateDkimKey(),
    record_status: {},
    verification: { requested_at: null, checked_at: null, verified_at: null, degraded_at: null },
  };
}
