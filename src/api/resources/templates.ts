// Templates (docs/api.md §20): create, list, retrieve, update and delete by id or alias, publish,
// duplicate. Sending with one is `template` on POST /emails (src/sending/template.ts).
import type { ApiContext } from '../app';
import type { Store, TemplateRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createTemplate, updateTemplate, publishTemplate, duplicateTemplate, removeTemplate, findTemplate, templateFields } from '../../templates';
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
    variables: v.variables.map(({ id, key, type, fallback_value, created_at, updated_at }) => ({ id, key, type, fallback_value, created_at, updated_at })),
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
      async handler({ caller, params }) {
        const t = await findTemplate(store, caller.team, ref(params.id_or_alias));
        if (!t) throw errors.notFound('Template');
        return view(t);
      },
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
  ];
});
