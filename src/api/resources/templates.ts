// Templates (docs/api.md §20): create, list, retrieve, update and delete by id or alias, publish,
// duplicate; and (Posthorn, §20.5) the history of published versions: list, retrieve, revert.
// Sending with one is `template` on POST /emails (src/sending/template.ts).
import type { ApiContext } from '../app';
import type { Store, TemplateRec, TemplateVersionRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createTemplate, updateTemplate, publishTemplate, duplicateTemplate, removeTemplate, findTemplate, templateFields, onTemplate } from '../../templates';
import { findVersion, historyPage, revertTo } from '../../templates/versions';
import { resource, route } from '../platform/route';
import { IgnoredBody, PageQuery } from '../../schemas/common';
import {
  CreateTemplateRequest,
  Template,
  TemplateDeleted,
  TemplateList,
  TemplateParams,
  TemplateRef,
  type TemplateSummary,
  TemplateVersion,
  TemplateVersionList,
  TemplateVersionParams,
  type TemplateVersionSummary,
  UpdateTemplateRequest,
} from '../../schemas/templates';

const status = (t: TemplateRec) => (t.published ? ('published' as const) : ('draft' as const));
/** True while the latest version is not the one sends use (a draft has no published one). */
const unpublished = (t: TemplateRec) => t.published !== null && t.published.id !== t.current.id;

/** List items (docs/api.md §20.1); Posthorn adds `has_unpublished_versions`, which a list needs to show it. */
const summary = (t: TemplateRec): TemplateSummary => ({
  id: t.id,
  name: t.name,
  status: status(t),
  published_at: t.published_at,
  created_at: t.created_at,
  updated_at: t.updated_at,
  alias: t.alias,
  has_unpublished_versions: unpublished(t),
});

const variableView = (v: TemplateRec['current']['variables'][number]) => ({
  id: v.id,
  key: v.key,
  type: v.type,
  fallback_value: v.fallback_value,
  created_at: v.created_at,
  updated_at: v.updated_at,
});

/** A version of the history (docs/api.md §20.5): `current` when sends use it now. */
const versionSummary = (t: TemplateRec, v: TemplateVersionRec): TemplateVersionSummary => ({
  object: 'template_version',
  id: v.id,
  template_id: t.id,
  version: v.number,
  published_at: v.created_at,
  reverted_from: v.reverted_from,
  current: t.published?.id === v.id,
  subject: v.content.subject,
});

const versionView = (t: TemplateRec, v: TemplateVersionRec): TemplateVersion => ({
  ...versionSummary(t, v),
  created_at: v.content.created_at,
  from: v.content.from,
  reply_to: v.content.reply_to,
  html: v.content.html,
  text: v.content.text,
  variables: v.content.variables.map(variableView),
});

/** The template with its latest version (docs/api.md §20.2). */
function view(t: TemplateRec): Template {
  const v = t.current;
  return {
    object: 'template',
    id: t.id,
    current_version_id: v.id,
    alias: t.alias,
    name: t.name,
    created_at: t.created_at,
    updated_at: t.updated_at,
    status: status(t),
    published_at: t.published_at,
    from: v.from,
    subject: v.subject,
    reply_to: v.reply_to,
    html: v.html,
    text: v.text,
    variables: v.variables.map(variableView),
    has_unpublished_versions: unpublished(t),
  };
}

/** An empty path segment names no template. */
const ref = (raw: string) => {
  if (!raw) throw errors.notFound('Template');
  return raw;
};

const changed = (t: TemplateRec) => ({ id: t.id, object: 'template' as const });

export const templatesResource = resource('Templates', ({ store }: ApiContext) => {
  /** The team's template the path names, or 404. */
  const load = async (team: string, raw: string) => {
    const t = await findTemplate(store, team, ref(raw));
    if (!t) throw errors.notFound('Template');
    return t;
  };
  /** The action POSTs answer 200 with the template they made or changed (docs/api.md §20.1). */
  const action = (name: 'publish' | 'duplicate', run: (store: Store, team: string, ref: string) => Promise<TemplateRec>, summary: string) =>
    route({
      method: 'POST',
      path: `/templates/:id_or_alias/${name}`,
      summary,
      access: 'team',
      params: TemplateParams,
      body: IgnoredBody,
      response: TemplateRef,
      handler: async ({ caller, params }) => changed(await run(store, caller.team, ref(params.id_or_alias))),
    });

  return [
    route({
      method: 'POST',
      path: '/templates',
      summary: 'Create a template (a draft)',
      access: 'team',
      body: CreateTemplateRequest,
      status: 201,
      response: TemplateRef,
      handler: async ({ caller, body }) => changed(await createTemplate(store, caller.team, templateFields(body, 'create'))),
    }),
    route({
      method: 'GET',
      path: '/templates',
      summary: 'List templates',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: TemplateList,
      handler: async ({ caller, query }) => listOf(await store.templates.page(caller.team, pageQuery(query), 20, summary)),
    }),
    route({
      method: 'GET',
      path: '/templates/:id_or_alias',
      summary: 'Retrieve a template by id or alias',
      access: 'team',
      params: TemplateParams,
      body: 'none',
      response: Template,
      handler: async ({ caller, params }) => view(await load(caller.team, params.id_or_alias)),
    }),
    route({
      method: 'PATCH',
      path: '/templates/:id_or_alias',
      summary: 'Update a template (its draft)',
      access: 'team',
      params: TemplateParams,
      body: UpdateTemplateRequest,
      response: TemplateRef,
      handler: async ({ caller, params, body }) => changed(await updateTemplate(store, caller.team, ref(params.id_or_alias), templateFields(body, 'update'))),
    }),
    route({
      method: 'DELETE',
      path: '/templates/:id_or_alias',
      summary: 'Delete a template',
      access: 'team',
      params: TemplateParams,
      body: IgnoredBody,
      response: TemplateDeleted,
      handler: async ({ caller, params }) => ({
        object: 'template' as const,
        id: await removeTemplate(store, caller.team, ref(params.id_or_alias)),
        deleted: true as const,
      }),
    }),
    action('publish', publishTemplate, 'Publish a template: sends use this version from now on'),
    action('duplicate', duplicateTemplate, 'Duplicate a template as a new draft'),
    route({
      method: 'GET',
      path: '/templates/:id_or_alias/versions',
      summary: "List a template's published versions, the latest first (Posthorn)",
      access: 'team',
      params: TemplateParams,
      query: PageQuery,
      body: 'none',
      response: TemplateVersionList,
      async handler({ caller, params, query }) {
        const t = await load(caller.team, params.id_or_alias);
        return listOf(await historyPage(store, t, pageQuery(query), (v) => versionSummary(t, v)));
      },
    }),
    route({
      method: 'GET',
      path: '/templates/:id_or_alias/versions/:version',
      summary: 'Retrieve a published version of a template by number or id (Posthorn)',
      access: 'team',
      params: TemplateVersionParams,
      body: 'none',
      response: TemplateVersion,
      async handler({ caller, params }) {
        const t = await load(caller.team, params.id_or_alias);
        return versionView(t, await findVersion(store, t, params.version));
      },
    }),
    route({
      method: 'POST',
      path: '/templates/:id_or_alias/versions/:version/revert',
      summary: 'Restore a published version: its copy becomes the latest version and is published (Posthorn)',
      access: 'team',
      params: TemplateVersionParams,
      body: IgnoredBody,
      response: TemplateVersion,
      async handler({ caller, params }) {
        const { template, version } = await onTemplate(store, caller.team, ref(params.id_or_alias), async (tx, cur, at) =>
          revertTo(tx, cur, await findVersion(tx, cur, params.version), at),
        );
        return versionView(template, version);
      },
    }),
  ];
});
