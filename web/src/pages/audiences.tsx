// Audiences: contacts (search, add, edit, unsubscribe state), segments and the suppression list.
import { useState } from 'preact/hooks';
import type { SegmentSummary } from '../../../src/schemas/segments';
import type { UpdateContactRequest } from '../../../src/schemas/contacts';
import { del, patch, post, qs, url, page } from '../api';
import { navigate, setQuery, useLocation } from '../router';
import {
  Badge,
  BounceClassBadge,
  Card,
  Empty,
  ErrorBox,
  ExportButton,
  Field,
  FormDialog,
  KeyValue,
  Loading,
  notify,
  PagedTable,
  PageHeader,
  Section,
  Table,
  Tabs,
  Time,
  useAction,
  useGet,
  usePaged,
  val,
  type InputEvent,
  ask,
} from '../ui';
import { ContactProperties, ContactTopics, Properties, Topics } from './contact-fields';
import { ImportDialog, Imports } from './imports';
import { useCan } from '../role';

export function AudiencesPage() {
  const { query } = useLocation();
  const tab = query.get('tab') ?? 'contacts';
  return (
    <>
      <PageHeader title="Audiences" description="Who you send broadcasts to, and who Posthorn will not send to." />
      <Tabs
        label="Audiences"
        current={tab}
        onChange={(t) => setQuery({ tab: t === 'contacts' ? null : t, after: null, before: null, q: null, segment: null })}
        tabs={[
          { id: 'contacts', label: 'Contacts' },
          { id: 'segments', label: 'Segments' },
          { id: 'topics', label: 'Topics' },
          { id: 'properties', label: 'Properties' },
          { id: 'imports', label: 'Imports' },
          { id: 'suppressions', label: 'Suppressions' },
        ]}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`} class="tab-panel">
        {tab === 'contacts' && <Contacts />}
        {tab === 'segments' && <Segments />}
        {tab === 'topics' && <Topics />}
        {tab === 'properties' && <Properties />}
        {tab === 'imports' && <Imports />}
        {tab === 'suppressions' && <Suppressions />}
      </div>
    </>
  );
}

function Contacts() {
  const member = useCan('member');
  const { query } = useLocation();
  const q = query.get('q') ?? '';
  const segment = query.get('segment') ?? '';
  const [text, setText] = useState(q);
  const [adding, setAdding] = useState(false);
  const [importing, setImporting] = useState(false);
  const segments = useGet('/segments');
  const filters = { q, segment_id: q ? null : segment || null };
  const paged = usePaged('/contacts', filters);
  return (
    <>
      <div class="filters">
        <search class="grow">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setQuery({ q: text, after: null, before: null });
            }}
          >
            <label>
              <span class="sr-only">Search contacts by email or name</span>
              <input type="search" placeholder="Search by email or name" value={text} onInput={(e) => setText(val(e))} />
            </label>
          </form>
        </search>
        <label>
          <span class="sr-only">Segment</span>
          <select value={segment} onChange={(e) => setQuery({ segment: val(e), q: null, after: null, before: null })}>
            <option value="">All contacts</option>
            {(segments.data?.data ?? []).map((s) => (
              <option value={s.id}>{s.name}</option>
            ))}
          </select>
        </label>
        <ExportButton path={url('/contacts/export', filters)} what="the contacts" />
        {member && (
          <>
            <button type="button" class="btn" onClick={() => setImporting(true)}>
              Import CSV
            </button>
            <button type="button" class="btn primary" onClick={() => setAdding(true)}>
              Add contact
            </button>
          </>
        )}
      </div>
      <PagedTable
        paged={paged}
        caption="Contacts"
        href={(c) => page`/dashboard/audiences/contacts/${c.id}`}
        empty={
          q || segment ? (
            <Empty title="No contact matches." />
          ) : (
            <Empty
              title="No contacts yet."
              action={
                <button type="button" class="btn primary" onClick={() => setAdding(true)}>
                  Add a contact
                </button>
              }
            >
              Add them here or with <code>POST /contacts</code>.
            </Empty>
          )
        }
        columns={[
          { label: 'Email', render: (c) => c.email },
          { label: 'Name', render: (c) => [c.first_name, c.last_name].filter(Boolean).join(' ') || <span class="muted">—</span> },
          { label: 'Status', render: (c) => (c.unsubscribed ? <Badge value="unsubscribed" /> : <Badge value="enabled" label="subscribed" />) },
          { label: 'Added', render: (c) => <Time iso={c.created_at} /> },
        ]}
      />
      <ContactDialog open={adding} segments={segments.data?.data ?? []} onClose={() => setAdding(false)} onDone={paged.reload} />
      <ImportDialog open={importing} segments={segments.data?.data ?? []} onClose={() => setImporting(false)} onDone={paged.reload} />
    </>
  );
}

function ContactDialog({ open, onClose, onDone, segments }: { open: boolean; onClose: () => void; onDone: () => void; segments: SegmentSummary[] }) {
  const [form, setForm] = useState({ email: '', first_name: '', last_name: '', segment: '' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const action = useAction(async () => {
    await post('/contacts', {
      email: form.email,
      first_name: form.first_name || undefined,
      last_name: form.last_name || undefined,
      segments: form.segment ? [{ id: form.segment }] : undefined,
    });
    notify('Contact added.');
    setForm({ email: '', first_name: '', last_name: '', segment: '' });
    onDone();
    onClose();
  });
  return (
    <FormDialog open={open} title="Add a contact" onClose={onClose} action={action} submit="Add contact">
      <Field id="c-email" label="Email">
        <input id="c-email" type="email" required value={form.email} onInput={set('email')} />
      </Field>
      <div class="two">
        <Field id="c-first" label="First name">
          <input id="c-first" value={form.first_name} onInput={set('first_name')} />
        </Field>
        <Field id="c-last" label="Last name">
          <input id="c-last" value={form.last_name} onInput={set('last_name')} />
        </Field>
      </div>
      <Field id="c-segment" label="Segment (optional)">
        <select id="c-segment" value={form.segment} onChange={set('segment')}>
          <option value="">None</option>
          {segments.map((s) => (
            <option value={s.id}>{s.name}</option>
          ))}
        </select>
      </Field>
    </FormDialog>
  );
}

export function ContactPage({ id }: { id: string }) {
  const canEdit = useCan('member');
  const c = useGet(url('/contacts/:id_or_email', { id_or_email: id }));
  const memberships = useGet(url('/contacts/:id_or_email/segments', { id_or_email: id }));
  const segments = useGet('/segments');
  const [form, setForm] = useState<{ first_name: string; last_name: string } | null>(null);
  const [join, setJoin] = useState('');
  const save = useAction(async (body: UpdateContactRequest) => {
    await patch(url('/contacts/:id_or_email', { id_or_email: id }), body);
    notify('Contact updated.');
    setForm(null);
    c.reload();
  });
  const member = useAction(async (segmentId: string, add: boolean) => {
    const path = url('/contacts/:id_or_email/segments/:segment_id', { id_or_email: id, segment_id: segmentId });
    if (add) await post(path);
    else await del(path);
    setJoin('');
    memberships.reload();
  });
  const remove = useAction(async () => {
    await del(url('/contacts/:id_or_email', { id_or_email: id }));
    navigate('/dashboard/audiences');
  });
  if (c.error) return <ErrorBox error={c.error} />;
  if (!c.data) return <Loading />;
  const x = c.data;
  const inSegments = new Set((memberships.data?.data ?? []).map((s) => s.id));
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/audiences', label: 'Audiences' }}
        title={x.email}
        description={x.unsubscribed ? <Badge value="unsubscribed" /> : <Badge value="enabled" label="subscribed" />}
        actions={
          <>
            <button type="button" class="btn" onClick={() => save.run({ unsubscribed: !x.unsubscribed })}>
              {x.unsubscribed ? 'Resubscribe' : 'Unsubscribe'}
            </button>
            <button type="button" class="btn danger ghost" onClick={async () => (await ask(`Delete ${x.email}?`, { confirm: 'Delete' })) && remove.run()}>
              Delete
            </button>
          </>
        }
      />
      <ErrorBox error={save.error ?? member.error ?? remove.error} />
      <div class="grid2">
        <Card>
          <h2 class="card-title">Details</h2>
          {form ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                save.run({ first_name: form.first_name || null, last_name: form.last_name || null });
              }}
            >
              <Field id="cp-first" label="First name">
                <input id="cp-first" value={form.first_name} onInput={(e) => setForm({ ...form, first_name: val(e) })} />
              </Field>
              <Field id="cp-last" label="Last name">
                <input id="cp-last" value={form.last_name} onInput={(e) => setForm({ ...form, last_name: val(e) })} />
              </Field>
              <div class="form-actions">
                <button type="button" class="btn" onClick={() => setForm(null)}>
                  Cancel
                </button>
                <button type="submit" class="btn primary">
                  Save
                </button>
              </div>
            </form>
          ) : (
            <>
              <KeyValue
                rows={[
                  ['First name', x.first_name],
                  ['Last name', x.last_name],
                  ['Added', <Time iso={x.created_at} exact />],
                ]}
              />
              <button type="button" class="btn" disabled={!canEdit} onClick={() => setForm({ first_name: x.first_name ?? '', last_name: x.last_name ?? '' })}>
                Edit
              </button>
            </>
          )}
        </Card>
        <Card>
          <h2 class="card-title">Segments</h2>
          <ul class="plain">
            {(memberships.data?.data ?? []).map((s) => (
              <li class="row-between">
                {s.name}
                <button type="button" class="btn small ghost" onClick={() => member.run(s.id, false)} aria-label={`Remove from ${s.name}`}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
          {memberships.data && !memberships.data.data.length && <p class="muted">In no segment.</p>}
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              if (join) member.run(join, true);
            }}
          >
            <label>
              <span class="sr-only">Segment to add to</span>
              <select value={join} onChange={(e) => setJoin(val(e))}>
                <option value="">Add to a segment…</option>
                {(segments.data?.data ?? [])
                  .filter((s) => !inSegments.has(s.id))
                  .map((s) => (
                    <option value={s.id}>{s.name}</option>
                  ))}
              </select>
            </label>
            <button type="submit" class="btn" disabled={!join}>
              Add
            </button>
          </form>
        </Card>
        <ContactProperties id={id} values={x.properties} onSaved={c.reload} />
        <ContactTopics id={id} />
      </div>
    </>
  );
}

function Segments() {
  const list = useGet('/segments');
  const [name, setName] = useState('');
  const create = useAction(async () => {
    await post('/segments', { name });
    setName('');
    notify('Segment created.');
    list.reload();
  });
  const remove = useAction(async (id: string) => {
    await del(url('/segments/:id', { id }));
    list.reload();
  });
  return (
    <>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          create.run();
        }}
      >
        <label class="grow">
          <span class="sr-only">New segment name</span>
          <input placeholder="New segment name, e.g. Newsletter" required value={name} onInput={(e) => setName(val(e))} />
        </label>
        <button type="submit" class="btn primary" disabled={create.busy}>
          Create segment
        </button>
      </form>
      <ErrorBox error={list.error ?? create.error ?? remove.error} />
      {list.data && !list.data.data.length && (
        <Empty title="No segments yet.">
          A segment is a list of contacts a broadcast goes to: create one here, then add contacts to it when you add or import them, or from a contact's page.
        </Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <Table
          caption="Segments"
          rows={list.data.data}
          href={(s) => `/dashboard/audiences${qs({ segment: s.id })}`}
          columns={[
            { label: 'Name', render: (s) => s.name },
            { label: 'Created', render: (s) => <Time iso={s.created_at} /> },
            { label: 'Id', render: (s) => <span class="mono small">{s.id}</span> },
            {
              label: 'Actions',
              render: (s) => (
                <button
                  type="button"
                  class="btn small ghost"
                  aria-label={`Delete segment ${s.name}`}
                  onClick={async () => (await ask(`Delete the segment ${s.name}? Its contacts stay.`, { confirm: 'Delete' })) && remove.run(s.id)}
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

function Suppressions() {
  const { query } = useLocation();
  const origin = query.get('origin') ?? '';
  const paged = usePaged('/suppressions', { origin });
  const [email, setEmail] = useState('');
  const add = useAction(async () => {
    await post('/suppressions', { email });
    setEmail('');
    notify('Address suppressed.');
    paged.reload();
  });
  const remove = useAction(async (id: string) => {
    await del(url('/suppressions/:id_or_email', { id_or_email: id }));
    notify('Address can be sent to again.');
    paged.reload();
  });
  return (
    <>
      <div class="filters">
        <form
          class="grow inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            add.run();
          }}
        >
          <label class="grow">
            <span class="sr-only">Address to suppress</span>
            <input type="email" placeholder="Suppress an address" required value={email} onInput={(e) => setEmail(val(e))} />
          </label>
          <button type="submit" class="btn">
            Suppress
          </button>
        </form>
        <label>
          <span class="sr-only">Origin</span>
          <select value={origin} onChange={(e) => setQuery({ origin: val(e), after: null, before: null })}>
            <option value="">Every origin</option>
            <option value="bounce">Bounces</option>
            <option value="complaint">Complaints</option>
            <option value="manual">Added by hand</option>
          </select>
        </label>
      </div>
      <ErrorBox error={add.error ?? remove.error} />
      <Section title="Suppressed addresses" actions={<ExportButton path={url('/suppressions/export', { origin })} what="the suppressed addresses" />}>
        <PagedTable
          paged={paged}
          caption="Suppressed addresses"
          empty={<Empty title="No suppressed addresses.">Bounces of addresses that do not exist and spam complaints land here automatically.</Empty>}
          columns={[
            { label: 'Email', render: (s) => s.email },
            { label: 'Origin', render: (s) => <Badge value={s.origin === 'manual' ? 'neutral' : 'bounced'} label={s.origin} /> },
            {
              // The class and the reply of a bounce (README.md, "Bounce classes and incidents"): what to
              // check before lifting entries an earlier version made.
              label: 'Reply',
              render: (s) =>
                s.class || s.reply ? (
                  <div class="suppression-reply">
                    {s.class && (
                      <span>
                        <BounceClassBadge value={s.class} />
                      </span>
                    )}
                    {s.reply && <span class="mono small">{s.reply}</span>}
                  </div>
                ) : (
                  '—'
                ),
            },
            { label: 'Because of', render: (s) => (s.source_id ? <a href={page`/dashboard/emails/${s.source_id}`}>this email</a> : '—') },
            { label: 'Since', render: (s) => <Time iso={s.created_at} /> },
            {
              label: 'Actions',
              render: (s) => (
                <button type="button" class="btn small ghost" aria-label={`Remove ${s.email} from the list`} onClick={() => remove.run(s.id)}>
                  Remove
                </button>
              ),
            },
          ]}
        />
      </Section>
    </>
  );
}
