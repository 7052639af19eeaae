// Contact properties (docs/api.md §12.7): the keys contacts may carry, each with a type and a
// fallback value. Responses use `created_at` and `fallback_value`: the SDK renames exactly these
// (docs/api.md §2 item 11). The logic lives in src/contacts/properties.ts.
import type { ApiContext } from '../app';
import type { ContactPropertyRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { writeOrRefuse } from '../../store';
import { MAX_PROPERTIES, newProperty, propertyChanges } from '../../contacts/properties';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { ContactProperty, CreateContactPropertyRequest, UpdateContactPropertyRequest } from '../../schemas/contact-properties';

const propertyView = (p: ContactPropertyRec): ContactProperty => ({
  object: 'contact_property',
  id: p.id,
  key: p.key,
  type: p.type,
  fallback_value: p.fallback_value,
  created_at: p.created_at,
});

const Params = UuidParams('id');

export const contactPropertiesResource = resource('Contact properties', ({ store }: ApiContext) => [
  route({
    method: 'POST',
    path: '/contact-properties',
    summary: 'Create a contact property',
    access: 'team',
    body: CreateContactPropertyRequest,
    status: 201,
    response: Ref('contact_property'),
    async handler({ caller, body }) {
      const { team } = caller;
      const prop = newProperty(team, body);
      await writeOrRefuse(store, async (tx) => {
        if (await tx.contactProperties.find('key', prop.key, team)) return errors.invalidField('key', `a contact property \`${prop.key}\` already exists.`);
        if ((await tx.contactProperties.all(team)).length >= MAX_PROPERTIES)
          return errors.validation(`A team can define at most ${MAX_PROPERTIES} contact properties.`);
        tx.contactProperties.put(prop);
      });
      return { object: 'contact_property' as const, id: prop.id };
    },
  }),
  route({
    method: 'GET',
    path: '/contact-properties',
    summary: 'List contact properties',
    access: 'team',
    query: PageQuery,
    body: 'none',
    response: List(ContactProperty),
    handler: async ({ caller, query }) => listOf(await store.contactProperties.page(caller.team, pageQuery(query), 20, propertyView)),
  }),
  route({
    method: 'GET',
    path: '/contact-properties/:id',
    summary: 'Retrieve a contact property',
    access: 'team',
    params: Params,
    body: 'none',
    response: ContactProperty,
    async handler({ caller, params }) {
      const prop = await store.contactProperties.get(caller.team, params.id);
      if (!prop) throw errors.notFound('Contact property');
      return propertyView(prop);
    },
  }),
  route({
    method: 'PATCH',
    path: '/contact-properties/:id',
    summary: "Update a contact property's fallback value",
    access: 'team',
    params: Params,
    body: UpdateContactPropertyRequest,
    response: Ref('contact_property'),
    async handler({ caller, params, body }) {
      const { team } = caller;
      await writeOrRefuse(store, async (tx) => {
        const cur = await tx.contactProperties.get(team, params.id);
        if (!cur) return errors.notFound('Contact property');
        tx.contactProperties.put(propertyChanges(cur, body));
      });
      return { object: 'contact_property' as const, id: params.id };
    },
  }),
  route({
    method: 'DELETE',
    path: '/contact-properties/:id',
    summary: 'Delete a contact property',
    access: 'team',
    params: Params,
    body: IgnoredBody,
    response: Deleted('contact_property'),
    async handler({ caller, params }) {
      const { team } = caller;
      // Contacts' values of it are no longer shown or used (src/contacts/properties.ts).
      await writeOrRefuse(store, async (tx) => {
        if (!(await tx.contactProperties.get(team, params.id))) return errors.notFound('Contact property');
        tx.contactProperties.remove(team, params.id);
      });
      return { object: 'contact_property' as const, id: params.id, deleted: true as const };
    },
  }),
]);
