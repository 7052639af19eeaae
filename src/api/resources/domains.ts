// Domains (docs/api.md §9): create (with an RSA-2048 DKIM key and the DNS records to publish),
// get, list, update, verify, delete.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import type { DomainRec, StoreReader } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { newId, nowIso } from '../../ids';
import { generateDkimKey } from '../../domains/dkim';
import { recordViews, deriveStatus } from '../../domains/records';
import { normaliseDomainName, checkReturnPath, checkTrackingSubdomain, trackingClash, REGIONS } from '../../domains/validate';

const tags = ['Domains'];
const Capability = t.Union([t.Literal('enabled'), t.Literal('disabled')], { error: 'The `{field}` field must be "enabled" or "disabled".' });
const Tls = t.Union([t.Literal('opportunistic'), t.Literal('enforced')], { error: 'The `tls` field must be "opportunistic" or "enforced".' });
const Bool = (name: string) => t.Boolean({ error: `The \`${name}\` field must be a boolean.` });

/** `tracking_subdomain` when one is set: the SDK types it optional, never null (docs/api.md §9.1). */
const trackingSubdomain = (d: DomainRec) => (d.tracking_subdomain ? { tracking_subdomain: d.tracking_subdomain } : {});

export function domainsRoutes(app: App, { store, config, domains: verifier }: ApiContext) {
  const hosts = { smtpHostname: config.smtp.hostname, publicUrl: config.public_url };
  const summary = (d: DomainRec) => ({
    id: d.id,
    name: d.name,
    status: d.status,
    created_at: d.created_at,
    region: d.region,
    open_tracking: d.open_tracking,
    click_tracking: d.click_tracking,
    capabilities: d.capabilities,
  });
  /**
   * A name is free when nobody registered it, no other team owns a domain above it (its
   * subdomains, return-path hosts included, receive that team's bounces and mail), and its own
   * return-path host is not another team's domain.
   */
  const nameAvailable = async (r: StoreReader, name: string, returnPath: string, team: string) => {
    if (await r.domains.find('name', name)) return false;
    const labels = name.split('.');
    for (let i = 1; i < labels.length - 1; i++) {
      const parent = await r.domains.find('name', labels.slice(i).join('.'));
      if (parent && parent.team_id !== team) return false;
    }
    const rp = await r.domains.find('name', `${returnPath}.${name}`);
    return !rp || rp.team_id === team;
  };
  const load = async (request: Request, raw: string) => {
    const d = await store.domains.get(caller(request).team, pathId(raw));
    if (!d) throw errors.notFound('Domain');
    return d;
  };

  app.post(
    '/domains',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      // Every field is checked before the name's availability (422 before 403, docs/api.md §3.3).
      const name = normaliseDomainName(body.name);
      const region = body.region ?? 'us-east-1';
      if (!REGIONS.includes(region)) throw new ApiError(422, 'invalid_region', `The \`region\` field must be one of ${REGIONS.join(', ')}.`);
      const custom_return_path = body.custom_return_path !== undefined ? checkReturnPath(body.custom_return_path) : 'send';
      const tracking_subdomain = typeof body.tracking_subdomain === 'string' ? checkTrackingSubdomain(body.tracking_subdomain, custom_return_path) : null;
      const capabilities = { sending: body.capabilities?.sending ?? 'enabled', receiving: body.capabilities?.receiving ?? 'disabled' } as const;
      if (capabilities.sending === 'disabled' && capabilities.receiving === 'disabled')
        throw errors.validation('At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.');
      const taken = () => errors.validation(`The \`${name}\` domain has been registered already.`, 403);
      if (!(await nameAvailable(store, name, custom_return_path, team))) throw taken();
      const d: DomainRec = {
        id: newId(),
        team_id: team,
        created_at: nowIso(),
        name,
        region,
        custom_return_path,
        open_tracking: body.open_tracking ?? false,
        click_tracking: body.click_tracking ?? false,
        tracking_subdomain,
        tls: body.tls ?? 'opportunistic',
        capabilities,
        status: 'not_started',
        dkim: await generateDkimKey(),
        record_status: {},
        verification: { requested_at: null, checked_at: null, verified_at: null, degraded_at: null },
      };
      // The name check is repeated inside the unit of work: two concurrent creates, one winner.
      const ok = await store.write(async (tx) => {
        if (!(await nameAvailable(tx, name, custom_return_path, team))) return false;
        tx.domains.put(d);
        return true;
      });
      if (!ok) throw taken();
      set.status = 201;
      return {
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
      };
    },
    {
      body: t.Object({
        name: t.String({ error: 'The `name` field must be a string.' }),
        region: t.Optional(t.String()),
        custom_return_path: t.Optional(t.String({ error: 'The `custom_return_path` field must be a string.' })),
        open_tracking: t.Optional(Bool('open_tracking')),
        click_tracking: t.Optional(Bool('click_tracking')),
        tracking_subdomain: t.Optional(t.Union([t.String(), t.Null()], { error: 'The `tracking_subdomain` field must be a string.' })),
        tls: t.Optional(Tls),
        capabilities: t.Optional(t.Object({ sending: t.Optional(Capability), receiving: t.Optional(Capability) })),
      }),
      detail: { summary: 'Create a domain', tags },
    },
  );

  app.get('/domains', async ({ request, query }) => listOf(await store.domains.page(caller(request).team, pageQuery(query), null, summary)), {
    detail: { summary: 'List domains', tags },
  });

  app.get(
    '/domains/:id',
    async ({ request, params }) => {
      const d = await load(request, params.id);
      return { object: 'domain', ...summary(d), ...trackingSubdomain(d), ...recordViews(d, hosts) };
    },
    { detail: { summary: 'Retrieve a domain', tags } },
  );

  app.patch(
    '/domains/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      if (body.tracking_subdomain === null) throw errors.invalidField('tracking_subdomain', 'can be changed but not removed.');
      const tracking = body.tracking_subdomain !== undefined ? checkTrackingSubdomain(body.tracking_subdomain) : undefined;
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
        };
        if (next.tracking_subdomain !== cur.tracking_subdomain) {
          // A new name to publish: its earlier check result says nothing about it.
          const { Tracking: _, ...rest } = cur.record_status;
          next.record_status = rest;
        }
        next.status = deriveStatus(next);
        tx.domains.put(next);
        return 'ok';
      });
      if (found === 'missing') throw errors.notFound('Domain');
      if (found === 'tracking-clash') throw trackingClash();
      if (found === 'no-capability') throw errors.validation('At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.');
      return { object: 'domain', id };
    },
    {
      body: t.Object({
        open_tracking: t.Optional(Bool('open_tracking')),
        click_tracking: t.Optional(Bool('click_tracking')),
        tls: t.Optional(Tls),
        tracking_subdomain: t.Optional(t.Union([t.String(), t.Null()], { error: 'The `tracking_subdomain` field must be a string.' })),
        capabilities: t.Optional(t.Object({ sending: t.Optional(Capability), receiving: t.Optional(Capability) })),
      }),
      detail: { summary: 'Update a domain', tags },
    },
  );

  app.post(
    '/domains/:id/verify',
    async ({ request, params }) => {
      const d = await load(request, params.id);
      // Answers once the pending state is stored; the DNS lookups run in the background.
      if (!(await verifier.request(d.team_id, d.id))) throw errors.notFound('Domain');
      return { object: 'domain', id: d.id };
    },
    { detail: { summary: 'Verify a domain (asynchronous DNS check)', tags } },
  );

  app.delete(
    '/domains/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const removed = await store.write(async (tx) => {
        if (!(await tx.domains.get(team, id))) return false;
        tx.domains.remove(team, id);
        return true;
      });
      if (!removed) throw errors.notFound('Domain');
      return { object: 'domain', id, deleted: true };
    },
    { detail: { summary: 'Delete a domain', tags } },
  );
}
