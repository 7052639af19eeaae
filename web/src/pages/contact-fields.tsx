// What contacts carry beside their name and segments: topics (kinds of email they choose to
// receive) and contact properties (typed values for placeholders). The lists and their forms for
// the Audiences page, and the two cards of a contact's page.
import { useState } from 'preact/hooks';
import type { Contact } from '../../../src/schemas/contacts';
import type { ContactTopic } from '../../../src/schemas/topics';
import { del, patch, post, url } from '../api';
import { Badge, Card, Empty, ErrorBox, Field, Form, type InputEvent, Table, Time, notify, useAction, useGet, val, ask } from '../ui';

export function Topics() {
  const list = useGet(url('/topics', { limit: 100 }));
  const [form, setForm] = useState({ name: '', description: '', default_subscription: 'opt_in', visibility: 'public' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const create = useAction(async () => {
    await post('/topics', { ...form, description: form.description || undefined });
    setForm({ ...form, name: '', description: '' });
    notify('Topic created.');
    list.reload();
  });
  const remove = useAction(async (id: string) => {
    await del(url('/topics/:id', { id }));
    list.reload();
  });
  return (
    <>
      <Card>
        <h2 class="card-title">New topic</h2>
        <Form action={create}>
          <div class="two">
            <Field id="t-name" label="Name">
              <input id="t-name" required maxLength={50} placeholder="Weekly newsletter" value={form.name} onInput={set('name')} />
            </Field>
            <Field id="t-desc" label="Description (optional)">
              <input id="t-desc" maxLength={200} value={form.description} onInput={set('description')} />
            </Field>
            <Field id="t-default" label="Contacts without a choice" hint="Cannot be changed later.">
              <select id="t-default" value={form.default_subscription} onChange={set('default_subscription')}>
                <option value="opt_in">Receive it (opt-in)</option>
                <option value="opt_out">Do not receive it (opt-out)</option>
              </select>
            </Field>
            <Field id="t-vis" label="Visibility" hint="Public topics are listed on the preference page.">
              <select id="t-vis" value={form.visibility} onChange={set('visibility')}>
                <option value="public">Public</option>
                <option value="private">Private</option>
              </select>
            </Field>
          </div>
          <button type="submit" class="btn primary" disabled={create.busy}>
            Create topic
          </button>
        </Form>
      </Card>
      <ErrorBox error={list.error ?? remove.error} />
      {list.data && !list.data.data.length && <Empty title="No topics yet.">A topic lets contacts choose which of your emails they receive.</Empty>}
      {list.data && list.data.data.length > 0 && (
        <Table
          caption="Topics"
          rows={list.data.data}
          columns={[
            {
              label: 'Name',
              render: (t) =>
                t.description ? (
                  <>
                    {t.name}
                    <br />
                    <span class="muted small">{t.description}</span>
                  </>
                ) : (
                  t.name
                ),
            },
            {
              label: 'Default',
              render: (t) => <Badge value={t.default_subscription === 'opt_in' ? 'enabled' : 'neutral'} label={t.default_subscription.replace('_', '-')} />,
            },
            { label: 'Visibility', render: (t) => t.visibility },
            { label: 'Created', render: (t) => <Time iso={t.created_at} /> },
            {
              label: 'Actions',
              render: (t) => (
                <button
                  type="button"
                  class="btn small ghost"
                  aria-label={`Delete topic ${t.name}`}
                  onClick={async () => (await ask(`Delete the topic ${t.name}? Contacts' choices about it go too.`, { confirm: 'Delete' })) && remove.run(t.id)}
                >
                  Delete
                </button>
              ),
            },
          ]}
        />
      )}
    </>
  );
}

export function Properties() {
  const list = useGet(url('/contact-properties', { limit: 100 }));
  const [form, setForm] = useState({ key: '', type: 'string', fallback: '' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const create = useAction(async () => {
    const fallback = form.fallback === '' ? undefined : form.type === 'number' ? Number(form.fallback) : form.fallback;
    await post('/contact-properties', { key: form.key, type: form.type, fallback_value: fallback });
    setForm({ key: '', type: form.type, fallback: '' });
    notify('Property created.');
    list.reload();
  });
  const remove = useAction(async (id: string) => {
    await del(url('/contact-properties/:id', { id }));
    list.reload();
  });
  return (
    <>
      <Card>
        <h2 class="card-title">New property</h2>
        <Form action={create}>
          <div class="two">
            <Field
              id="p-key"
              label="Key"
              hint={
                <>
                  Letters, digits and underscores; used as <code>{'{{{contact.key}}}'}</code>.
                </>
              }
            >
              <input id="p-key" required maxLength={50} pattern="[A-Za-z0-9_]+" placeholder="company_name" value={form.key} onInput={set('key')} />
            </Field>
            <Field id="p-type" label="Type">
              <select id="p-type" value={form.type} onChange={set('type')}>
                <option value="string">Text</option>
                <option value="number">Number</option>
              </select>
            </Field>
            <Field id="p-fallback" label="Fallback value (optional)" hint="Used in broadcasts for contacts without a value.">
              <input id="p-fallback" inputMode={form.type === 'number' ? 'decimal' : 'text'} value={form.fallback} onInput={set('fallback')} />
            </Field>
          </div>
          <button type="submit" class="btn primary" disabled={create.busy}>
            Create property
          </button>
        </Form>
      </Card>
      <ErrorBox error={list.error ?? remove.error} />
      {list.data && !list.data.data.length && (
        <Empty title="No properties yet.">Properties hold what you know about contacts, for placeholders in broadcasts.</Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <Table
          caption="Contact properties"
          rows={list.data.data}
          columns={[
            { label: 'Key', render: (x) => <span class="mono">{x.key}</span> },
            { label: 'Type', render: (x) => x.type },
            { label: 'Fallback', render: (x) => (x.fallback_value === null ? <span class="muted">—</span> : String(x.fallback_value)) },
            { label: 'Created', render: (x) => <Time iso={x.created_at} /> },
            {
              label: 'Actions',
              render: (x) => (
                <button
                  type="button"
                  class="btn small ghost"
                  aria-label={`Delete property ${x.key}`}
                  onClick={async () => (await ask(`Delete the property ${x.key}? Contacts' values of it go too.`, { confirm: 'Delete' })) && remove.run(x.id)}
                >
                  Delete
                </button>
              ),
            },
          ]}
        />
      )}
    </>
  );
}

/** A contact's values of the team's properties, edited together. */
export function ContactProperties({ id, values, onSaved }: { id: string; values: Contact['properties']; onSaved: () => void }) {
  const defs = useGet(url('/contact-properties', { limit: 100 }));
  const [form, setForm] = useState<Record<string, string> | null>(null);
  const save = useAction(async () => {
    const properties: Record<string, string | number | null> = {};
    for (const d of defs.data?.data ?? []) {
      const v = form![d.key] ?? '';
      properties[d.key] = v === '' ? null : d.type === 'number' ? Number(v) : v;
    }
    await patch(url('/contacts/:id_or_email', { id_or_email: id }), { properties });
    notify('Properties saved.');
    setForm(null);
    onSaved();
  });
  const list = defs.data?.data ?? [];
  return (
    <Card>
      <h2 class="card-title">Properties</h2>
      {defs.data && !list.length && <p class="muted">No properties defined yet (Audiences → Properties).</p>}
      {form ? (
        <Form action={save}>
          {list.map((d) => (
            <Field id={`cv-${d.key}`} label={d.key}>
              <input
                id={`cv-${d.key}`}
                inputMode={d.type === 'number' ? 'decimal' : 'text'}
                value={form[d.key] ?? ''}
                onInput={(e) => setForm({ ...form, [d.key]: val(e) })}
              />
            </Field>
          ))}
          <div class="form-actions">
            <button type="button" class="btn" onClick={() => setForm(null)}>
              Cancel
            </button>
            <button type="submit" class="btn primary" disabled={save.busy}>
              Save
            </button>
          </div>
        </Form>
      ) : (
        list.length > 0 && (
          <>
            <dl class="kv">
              {list.map((d) => (
                <div>
                  <dt>{d.key}</dt>
                  <dd>
                    {values[d.key] !== undefined ? (
                      String(values[d.key].value)
                    ) : (
                      <span class="muted">{d.fallback_value === null ? '—' : `${d.fallback_value} (fallback)`}</span>
                    )}
                  </dd>
                </div>
              ))}
            </dl>
            <button
              type="button"
              class="btn"
              onClick={() => setForm(Object.fromEntries(list.map((d) => [d.key, values[d.key] !== undefined ? String(values[d.key].value) : ''])))}
            >
              Edit properties
            </button>
          </>
        )
      )}
    </Card>
  );
}

/** A contact's subscription to each topic, switched one at a time. */
export function ContactTopics({ id }: { id: string }) {
  const topics = useGet(url('/contacts/:id_or_email/topics', { id_or_email: id, limit: 100 }));
  const change = useAction(async (topic: string, subscription: ContactTopic['subscription']) => {
    await patch(url('/contacts/:id_or_email/topics', { id_or_email: id }), { topics: [{ id: topic, subscription }] });
    topics.reload();
  });
  const list = topics.data?.data ?? [];
  return (
    <Card>
      <h2 class="card-title">Topics</h2>
      <ErrorBox error={topics.error ?? change.error} />
      {topics.data && !list.length && <p class="muted">No topics yet (Audiences → Topics).</p>}
      <ul class="plain">
        {list.map((t) => (
          <li class="row-between">
            <label class="check">
              <input type="checkbox" checked={t.subscription === 'opt_in'} onChange={(e) => change.run(t.id, e.currentTarget.checked ? 'opt_in' : 'opt_out')} />{' '}
              {t.name}
            </label>
            <Badge value={t.subscription === 'opt_in' ? 'enabled' : 'neutral'} label={t.subscription === 'opt_in' ? 'subscribed' : 'not subscribed'} />
          </li>
        ))}
      </ul>
    </Card>
  );
}
