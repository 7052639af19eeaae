// Domains (docs/api.md §9): create (with an RSA-2048 DKIM key and the DNS records to publish),
// get, list, update, verify, rotate the DKIM key, delete.
import type { ApiContext } from '../app';
import type { DomainRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId } from '../../ids';
import { recordHosts, recordViews, deriveStatus } from '../../domains/records';
import { checkTrackingSubdomain, trackingClash } from '../../domains/validate';
import { checkPool, checkRegion, domainSettings, nameAvailable, nameTaken, newDomain, placementOf } from '../../domains/create';
import { dkimView, startRotation } from '../../domains/dkim';
import { addDomain, putDomain, removeDomain } from '../../domains/events';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { CreateDomainRequest, Domain, DomainCreated, DomainList, type DomainSummary, RotateDkimRequest, UpdateDomainRequest } from '../../schemas/domains';

/** `tracking_subdomain` when one is set: the SDK types it optional, never null (docs/api.md §9.1). */
const trackingSubdomain = (d: DomainRec) => (d.tracking_subdomain ? { tracking_subdomain: d.tracking_subdomain } : {});

const summary = (d: DomainRec): DomainSummary => ({
  id: d.id,
  name: d.name,
  status: d.status,
  created_at: d.created_at,
  region: d.region,
  open_tracking: d.open_tracking,
  click_tracking: d.click_tracking,
  capabilities: d.capabilities,
});

const Params = UuidParams('id');

export const domainsResource = resource('Domains', ({ store, config, events, domains: verifier, claims }: ApiContext) => {
  const hosts = recordHosts(config);
  const placement = placementOf(config);
  const changes = { events, hosts };
  // Posthorn: the DKIM keys, a rotation under way and the retired selectors (docs/api.md §9.10).
  const view = (d: DomainRec): Domain => ({
    object: 'domain',
    ...summary(d),
    ...trackingSubdomain(d),
    ...recordViews(d, hosts),
    tls: d.tls,
    ...(d.pool ? { pool: d.pool } : {}),
    dkim: dkimView(d),
  });
  const created = (d: DomainRec): DomainCreated => ({
    id: d.id,
    name: d.name,
    created_at: d.created_at,
    status: d.status,
    open_tracking: d.open_tracking,
    click_tracking: d.click_tracking,
    ...trackingSubdomain(d),
    capabilities: d.capabilities,
    ...recordViews(d, hosts),
    region: d.region,
  });
  const load = async (team: string, id: string) => {
    const d = await store.domains.get(team, id);
    if (!d) throw errors.notFound('Domain');
    return d;
  };

  return [
    route({
      method: 'POST',
      path: '/domains',
      summary: 'Create a domain',
      access: 'team',
      audit: 'domain.created',
      body: CreateDomainRequest,
      status: 201,
      response: DomainCreated,
      async handler({ caller, body }) {
        const { team } = caller;
        // Every field is checked before the name's availability (422 before 403, docs/api.md §3.3).
        const settings = domainSettings(body, placement);
        const { name, custom_return_path } = settings;
        if (!(await nameAvailable(store, name, custom_return_path, team))) throw nameTaken(name);
        const d = await newDomain(team, newId(), settings);
        // The name check is repeated inside the unit of work: two concurrent creates, one winner.
        const ok = await store.write(async (tx) => {
          if (!(await nameAvailable(tx, name, custom_return_path, team))) return false;
          await addDomain(changes, tx, d);
          return true;
        });
        if (!ok) throw nameTaken(name);
        return created(d);
      },
    }),

    route({
      method: 'GET',
      path: '/domains',
      summary: 'List domains',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: DomainList,
      handler: async ({ caller, query }) => listOf(await store.domains.page(caller.team, pageQuery(query), null, summary)),
    }),

    route({
      method: 'GET',
      path: '/domains/:id',
      summary: 'Retrieve a domain',
      access: 'team',
      params: Params,
      body: 'none',
      response: Domain,
      handler: async ({ caller, params }) => view(await load(caller.team, params.id)),
    }),

    route({
      method: 'POST',
      path: '/domains/:id/dkim/rotate',
      summary: 'Rotate the DKIM key (Posthorn)',
      description:
        'Body `{ed25519?: boolean}` (default false: RSA only). New keys under new selectors, listed in `records` as pending DKIM records; signing switches once they verify (POST /domains/{id}/verify, or the periodic re-check), and the old selector stays listed until `dkim.previous.remove_after` (`safe_to_remove`). Answers the domain as GET /domains/{id}. A rotation already pending, or sending disabled → 422 `validation_error`; unknown → 404.',
      access: 'team',
      audit: 'domain.updated',
      params: Params,
      body: RotateDkimRequest,
      response: Domain,
      async handler({ caller, params, body }) {
        const { team } = caller;
        const d = await startRotation(store, changes, team, params.id, { ed25519: body.ed25519 ?? false });
        // Published already? The records are looked up now, and with every re-check after.
        void verifier.check(team, params.id);
        return view(d);
      },
    }),

    route({
      method: 'PATCH',
      path: '/domains/:id',
      summary: 'Update a domain',
      access: 'team',
      audit: 'domain.updated',
      params: Params,
      body: UpdateDomainRequest,
      response: Ref('domain'),
      async handler({ caller, params, body }) {
        const { team } = caller;
        const { id } = params;
        if (body.tracking_subdomain === null) throw errors.invalidField('tracking_subdomain', 'can be changed but not removed.');
        const tracking = body.tracking_subdomain !== undefined ? checkTrackingSubdomain(body.tracking_subdomain) : undefined;
        const region = body.region !== undefined ? checkRegion(body.region, placement) : undefined;
        const pool = body.pool !== undefined ? checkPool(body.pool, placement) : undefined;
        const found = await store.write(async (tx) => {
          const cur = await tx.domains.get(team, id);
          if (!cur) return 'missing';
          if (tracking !== undefined && tracking === cur.custom_return_path) return 'tracking-clash';
          const capabilities = { ...cur.capabilities, ...(body.capabilities ?? {}) };
          if (capabilities.sending === 'disabled' && capabilities.receiving === 'disabled') return 'no-capability';
          const next: DomainRec = {
            ...cur,
            open_tracking: body.open_tracking ?? cur.open_tracking,
            click_tracking: body.click_tracking ?? cur.click_tracking,
            tls: body.tls ?? cur.tls,
            tracking_subdomain: tracking ?? cur.tracking_subdomain,
            capabilities,
            region: region ?? cur.region,
          };
          if (pool !== undefined) {
            if (pool === 'default') delete next.pool;
            else next.pool = pool;
          }
          if (next.tracking_subdomain !== cur.tracking_subdomain) {
            // A new name to publish: its earlier check result says nothing about it.
            const { Tracking: _, ...rest } = cur.record_status;
            next.record_status = rest;
          }
          next.status = deriveStatus(next);
          await putDomain(changes, tx, cur, next);
          return 'ok';
        });
        if (found === 'missing') throw errors.notFound('Domain');
        if (found === 'tracking-clash') throw trackingClash();
        if (found === 'no-capability') throw errors.validation('At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.');
        return { object: 'domain' as const, id };
      },
    }),

    route({
      method: 'POST',
      path: '/domains/:id/verify',
      summary: 'Verify a domain (asynchronous DNS check)',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Ref('domain'),
      async handler({ caller, params }) {
        const d = await load(caller.team, params.id);
        // Answers once the pending state is stored; the DNS lookups run in the background.
        if (!(await verifier.request(d.team_id, d.id))) throw errors.notFound('Domain');
        return { object: 'domain' as const, id: d.id };
      },
    }),

    route({
      method: 'DELETE',
      path: '/domains/:id',
      summary: 'Delete a domain',
      access: 'team',
      audit: 'domain.deleted',
      params: Params,
      body: IgnoredBody,
      response: Deleted('domain'),
      async handler({ caller, params }) {
        const { team } = caller;
        const { id } = params;
        const removed = await store.write(async (tx) => {
          const cur = await tx.domains.get(team, id);
          if (!cur) return false;
          await removeDomain(changes, tx, cur);
          return true;
        });
        // The placeholder of a pending claim (docs/api.md §9.9): deleting it cancels the claim.
        if (!removed && !(await claims.cancel(team, id))) throw errors.notFound('Domain');
        return { object: 'domain' as const, id, deleted: true as const };
      },
    }),
  ];
});
