// Templates (docs/api.md §20): create, list, retrieve, update and delete by id or alias, publish,
// duplicate. Sending with one is `template` on POST /emails (src/sending/template.ts).
import type { App, ApiContext } from '../app';
import type { TemplateRec } from '../../store';
import { caller } from '../platform/context';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createTemplate, updateTemplate, publishTemplate, duplicateTemplate, removeTemplate, findTemplate, templateFields } from '../../templates';

const tags = ['Templates'];

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A request body: a JSON object (an empty body is one without fields, docs/api.md §2 item 1). */
function bodyOf(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw errors.badJson('The request body must be a JSON object.');
  return body;
}

const status = (t: TemplateRec) => (t.published ? ('published' as const) : ('draft' as const));
/** True while the latest version is not the one sends use (a draft has no published one). */
const unpublished = (t: TemplateRec) => t.published !== null && t.published.id !== t.current.id;

/** List items (docs/api.md §20.1); Posthorn adds `has_unpublished_versions`, which a list needs to show it. */
const summary = (t: TemplateRec) => ({
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
function view(t: TemplateRec) {
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

export function templatesRoutes(app: App, { store }: ApiContext) {
  const ref = (raw: string) => {
    if (!raw) throw errors.notFound('Template');
    return raw;
  };

  app.post(
    '/templates',
    async ({ request, body, set }) => {
      const t = await createTemplate(store, caller(request).team, templateFields(bodyOf(body), 'create'));
      set.status = 201;
      return { id: t.id, object: 'template' };
    },
    { detail: { summary: 'Create a template (a draft)', tags } },
  );

  app.get('/templates', async ({ request, query }) => listOf(await store.templates.page(caller(request).team, pageQuery(query), 20, summary)), {
    detail: { summary: 'List templates', tags },
  });

  app.get(
    '/templates/:id_or_alias',
    async ({ request, params }) => {
      const t = await findTemplate(store, caller(request).team, ref(params.id_or_alias));
      if (!t) throw errors.notFound('Template');
      return view(t);
    },
    { detail: { summary: 'Retrieve a template by id or alias', tags } },
  );

  app.patch(
    '/templates/:id_or_alias',
    async ({ request, params, body }) => {
      const t = await updateTemplate(store, caller(request).team, ref(params.id_or_alias), templateFields(bodyOf(body), 'update'));
      return { id: t.id, object: 'template' };
    },
    { detail: { summary: 'Update a template (its draft)', tags } },
  );

  app.delete(
    '/templates/:id_or_alias',
    async ({ request, params }) => ({ object: 'template', id: await removeTemplate(store, caller(request).team, ref(params.id_or_alias)), deleted: true }),
    { detail: { summary: 'Delete a template', tags } },
  );

  // The action POSTs answer 200 with the template they made or changed (docs/api.md §20.1).
  for (const [action, run, title] of [
    ['publish', publishTemplate, 'Publish a template: sends use this version from now on'],
    ['duplicate', duplicateTemplate, 'Duplicate a template as a new draft'],
  ] as const)
    app.post(
      `/templates/:id_or_alias/${action}`,
      async ({ request, params }) => {
        const t = await run(store, caller(request).team, ref(params.id_or_alias));
        return { id: t.id, object: 'template' };
      },
      { detail: { summary: title, tags } },
    );
}
