// Contact properties (docs/api.md §12.7): the keys contacts may carry, each with a type and a
// fallback value. Responses use `created_at` and `fallback_value`: the SDK renames exactly these
// (docs/api.md §2 item 11). The logic lives in src/contacts/properties.ts.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { objectBody } from '../platform/body';
import { errors } from '../../errors';
import { writeOrRefuse } from '../../store';
import { MAX_PROPERTIES, newProperty, propertyChanges, propertyView } from '../../contacts/properties';

const tags = ['Contact properties'];

export function contactPropertiesRoutes(app: App, { store }: ApiContext) {
  const load = async (request: Request, raw: string) => {
    const prop = await store.contactProperties.get(caller(request).team, pathId(raw));
    if (!prop) throw errors.notFound('Contact property');
    return prop;
  };

  app.post(
    '/contact-properties',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      const prop = newProperty(team, objectBody(body));
      await writeOrRefuse(store, async (tx) => {
        if (await tx.contactProperties.find('key', prop.key, team)) return errors.invalidField('key', `a contact property \`${prop.key}\` already exists.`);
        if ((await tx.contactProperties.all(team)).length >= MAX_PROPERTIES)
          return errors.validation(`A team can define at most ${MAX_PROPERTIES} contact properties.`);
        tx.contactProperties.put(prop);
      });
      set.status = 201;
      return { object: 'contact_property', id: prop.id };
    },
    { detail: { summary: 'Create a contact property', tags } },
  );

  app.get(
    '/contact-properties',
    async ({ request, query }) => listOf(await store.contactProperties.page(caller(request).team, pageQuery(query), 20, propertyView)),
    { detail: { summary: 'List contact properties', tags } },
  );

  app.get('/contact-properties/:id', async ({ request, params }) => propertyView(await load(request, params.id)), {
    detail: { summary: 'Retrieve a contact property', tags },
  });

  app.patch(
    '/contact-properties/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const changes = objectBody(body);
      await writeOrRefuse(store, async (tx) => {
        const cur = await tx.contactProperties.get(team, id);
        if (!cur) return errors.notFound('Contact property');
        tx.contactProperties.put(propertyChanges(cur, changes));
      });
      return { object: 'contact_property', id };
    },
    { detail: { summary: "Update a contact property's fallback value", tags } },
  );

  app.delete(
    '/contact-properties/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      // Contacts' values of it are no longer shown or used (src/contacts/properties.ts).
      await writeOrRefuse(store, async (tx) => {
        if (!(await tx.contactProperties.get(team, id))) return errors.notFound('Contact property');
        tx.contactProperties.remove(team, id);
      });
      return { object: 'contact_property', id, deleted: true };
    },
    { detail: { summary: 'Delete a contact property', tags } },
  );
}
