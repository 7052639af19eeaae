// Domains (docs/api.md §9): create (with an RSA-2048 DKIM key and the DNS records to publish),
// get, list, update, verify, delete.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import type { DomainRec } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId } from '../../ids';
import { recordViews, deriveStatus } from '../../domains/records';
import { checkTrackingSubdomain, trackingClash } from '../../domains/validate';
import { domainSettings, nameAvailable, nameTaken, newDomain } from '../../domains/create';
import { dkimView, startRotation } from '../../domains/dkim';

const tags = ['Domains'];
const Capability = t.Union([t.Literal('enabled'), t.Literal('disabled')], { error: 'The `{field}` field must be "enabled" or "disabled".' });
const Tls = t.Union([t.Literal('opportunistic'), t.Literal('enforced')], { error: 'The `tls` field must be "opportunistic" or "enforced".' });
const Bool = (name: string) => t.Boolean({ error: `The \`${name}\` field must be a boolean.` });

/** `tracking_subdomain` when one is set: the SDK types it optional, never null (docs/api.md §9.1). */
const trackingSubdomain = (d: DomainRec) => (d.tracking_subdomain ? { tracking_subdomain: d.tracking_subdomain } : {});

/** Body fields of POST /domains that a domain claim takes too (docs/api.md §9.1, §9.9). */
export const domainFields = {
  name: t.String({ error: 'The `name` field must be a string.' }),
  region: t.Optional(t.String()),
  custom_return_path: t.Optional(t.String({ error: 'The `custom_return_path` field must be a string.' })),
  open_tracking: t.Optional(Bool('open_tracking')),
  click_tracking: t.Optional(Bool('click_tracking')),
  tracking_subdomain: t.Optional(t.Union([t.String(), t.Null()], { error: 'The `tracking_subdomain` field must be a string.' })),
};

export function domainsRoutes(app: App, { store, config, domains: verifier, claims }: ApiContext) {
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
  // Posthorn: the DKIM keys, a rotation under way and the retired selectors (docs/api.md §9.10).
  const view = (d: DomainRec) => ({ object: 'domain', ...summary(d), ...trackingSubdomain(d), ...recordViews(d, hosts), dkim: dkimView(d) });
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
      const settings = domainSettings(body);
      const { name, custom_return_path } = settings;
      if (!(await nameAvailable(store, name, custom_return_path, team))) throw nameTaken(name);
      const d = await newDomain(team, newId(), settings);
      // The name check is repeated inside the unit of work: two concurrent creates, one winner.
      const ok = await store.write(async (tx) => {
        if (!(await nameAvailable(tx, name, custom_return_path, team))) return false;
        tx.domains.put(d);
        return true;
      });
      if (!ok) throw nameTaken(name);
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
        ...domainFields,
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
      return view(d);
    },
    { detail: { summary: 'Retrieve a domain', tags } },
  );

  app.post(
    '/domains/:id/dkim/rotate',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
        throw errors.badJson('The request body must be a JSON object.');
      const ed25519 = (body as { ed25519?: unknown } | undefined)?.ed25519 ?? false;
      if (typeof ed25519 !== 'boolean') throw errors.invalidField('ed25519', 'must be a boolean.');
      const d = await startRotation(store, team, id, { ed25519 });
      // Published already? The records are looked up now, and with every re-check after.
      void verifier.check(team, id);
      return view(d);
    },
    {
      detail: {
        summary: 'Rotate the DKIM key (Posthorn)',
        description:
          'Body `{ed25519?: boolean}` (default false: RSA only). New keys under new selectors, listed in `records` as pending DKIM records; signing switches once they verify (POST /domains/{id}/verify, or the periodic re-check), and the old selector stays listed until `dkim.previous.remove_after` (`safe_to_remove`). Answers the domain as GET /domains/{id}. A rotation already pending, or sending disabled → 422 `validation_error`; unknown → 404.',
        tags,
      },
    },
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
      // The placeholder of a pending claim (docs/api.md §9.9): deleting it cancels the claim.
      if (!removed && !(await claims.cancel(team, id))) throw errors.notFound('Domain');
      return { object: 'domain', id, deleted: true };
    },
    { detail: { summary: 'Delete a domain', tags } },
  );
}
