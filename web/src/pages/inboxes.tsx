// Inboxes (docs/api.md §25): the team's shared inboxes with their unread counts, a new one on a
// receiving domain, and an inbox's settings — its name and sender name, its labels and the
// instructions of its agent. The mailbox itself (folders, threads, replies) is pages/mailbox.tsx.
import { useEffect, useState } from 'preact/hooks';
import { del, page, patch, post, url } from '../api';
import { navigate } from '../router';
import { useCan } from '../role';
import { ask, Card, Empty, ErrorBox, Field, FormDialog, Loading, notify, PageHeader, Section, Time, useAction, useGet, val } from '../ui';
import type { Inbox, InboxAgent, InboxLabel, InboxSummary } from '../../../src/schemas/inboxes';

/** A label's colour as its swatch (Resend's labels are `#RRGGBB`; anything else shows gray). */
export function Swatch({ color }: { color: string }) {
  const c = /^#[0-9a-f]{6}$/i.test(color) ? color : '#9ca3af';
  // Set through the CSSOM (Preact's style prop), which the page's CSP allows; a style attribute it would not.
  return <span class="swatch" aria-hidden="true" style={{ background: c }} />;
}

/** The inbox's name, else its address. */
export const inboxName = (i: Pick<InboxSummary, 'name' | 'email_address'>) => i.name || i.email_address;

export function InboxesPage() {
  const list = useGet(url('/inboxes', { limit: 100 }));
  const [creating, setCreating] = useState(false);
  const member = useCan('member');
  return (
    <>
      <PageHeader
        need="member"
        title="Inboxes"
        description="Shared inboxes on your receiving domains: conversations threaded, labelled, assigned and answered together."
        actions={
          <button type="button" class="btn primary" onClick={() => setCreating(true)}>
            New inbox
          </button>
        }
      />
      <ErrorBox error={list.error} />
      {!list.data && !list.error && <Loading />}
      {list.data && !list.data.data.length && (
        <Empty
          title="No inboxes yet."
          action={
            member && (
              <button type="button" class="btn primary" onClick={() => setCreating(true)}>
                Create an inbox
              </button>
            )
          }
        >
          An inbox gathers the mail sent to one address of a receiving domain, such as support@, into conversations your team answers here.
        </Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <ul class="inbox-cards">
          {list.data.data.map((i) => (
            <li key={i.id} class="card inbox-card">
              <a class="inbox-card-name" href={page`/dashboard/inboxes/${i.id}`}>
                {inboxName(i)}
              </a>
              <span class="muted small truncate-line">{i.email_address}</span>
              <span class="inbox-card-meta small">
                {i.unread > 0 ? <strong>{i.unread} unread</strong> : <span class="muted">All read</span>}
                <span class="muted">
                  {i.last_received ? (
                    <>
                      Last mail <Time iso={i.last_received} />
                    </>
                  ) : (
                    'No mail yet'
                  )}
                </span>
              </span>
            </li>
          ))}
        </ul>
      )}
      <CreateInboxDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

function CreateInboxDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const domains = useGet(open ? '/domains' : null);
  const receiving = (domains.data?.data ?? []).filter((d) => d.capabilities.receiving === 'enabled');
  const [local, setLocal] = useState('support');
  const [domain, setDomain] = useState('');
  const [name, setName] = useState('');
  const [fromName, setFromName] = useState('');
  useEffect(() => {
    if (!domain && receiving[0]) setDomain(receiving[0].name);
  }, [receiving.length]);
  const create = useAction(async () => {
    const made = await post('/inboxes', {
      email_address: `${local.trim()}@${domain}`,
      name: name.trim() || undefined,
      from_name: fromName.trim() || undefined,
    });
    notify('Inbox created.');
    onClose();
    navigate(page`/dashboard/inboxes/${made.id}`);
  });
  return (
    <FormDialog open={open} title="New inbox" onClose={onClose} action={create} submit="Create inbox" disabled={!receiving.length}>
      {domains.data && !receiving.length && (
        <p class="callout">
          An inbox needs a domain with receiving turned on. <a href="/dashboard/domains">Set one up on the Domains page</a>.
        </p>
      )}
      <Field id="inbox-local" label="Address" hint="Mail sent to this address lands in the inbox.">
        <div class="address-input">
          <input id="inbox-local" required value={local} onInput={(e) => setLocal(val(e))} aria-describedby="inbox-local-hint" autoComplete="off" />
          <span aria-hidden="true">@</span>
          <select aria-label="Domain" value={domain} onChange={(e) => setDomain(val(e))}>
            {receiving.map((d) => (
              <option value={d.name}>{d.name}</option>
            ))}
          </select>
        </div>
      </Field>
      <Field id="inbox-name" label="Name" hint="Shown in the dashboard, e.g. Support.">
        <input id="inbox-name" value={name} onInput={(e) => setName(val(e))} aria-describedby="inbox-name-hint" />
      </Field>
      <Field id="inbox-from" label="Sender name" hint="The name replies are sent under, e.g. Acme Support.">
        <input id="inbox-from" value={fromName} onInput={(e) => setFromName(val(e))} aria-describedby="inbox-from-hint" />
      </Field>
    </FormDialog>
  );
}

export function InboxSettingsPage({ id }: { id: string }) {
  const inbox = useGet(url('/inboxes/:inbox', { inbox: id }));
  if (inbox.error)
    return (
      <>
        <PageHeader back={{ href: '/dashboard/inboxes', label: 'Inboxes' }} title="Inbox settings" />
        <ErrorBox error={inbox.error} />
      </>
    );
  if (!inbox.data) return <Loading />;
  const i = inbox.data;
  return (
    <>
      <PageHeader back={{ href: page`/dashboard/inboxes/${id}`, label: inboxName(i) }} title="Inbox settings" description={i.email_address} />
      <InboxForm inbox={i} onSaved={inbox.reload} />
      <LabelsSection id={id} />
      <AgentSection id={id} />
      <DangerSection inbox={i} />
    </>
  );
}

function InboxForm({ inbox, onSaved }: { inbox: Inbox; onSaved: () => void }) {
  const member = useCan('member');
  const [name, setName] = useState(inbox.name ?? '');
  const [fromName, setFromName] = useState(inbox.from_name ?? '');
  const save = useAction(async () => {
    await patch(url('/inboxes/:inbox', { inbox: inbox.id }), { name: name.trim(), from_name: fromName.trim() });
    notify('Inbox saved.');
    onSaved();
  });
  return (
    <Card>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <ErrorBox error={save.error} />
        <div class="two">
          <Field id="settings-name" label="Name">
            <input id="settings-name" value={name} disabled={!member} onInput={(e) => setName(val(e))} />
          </Field>
          <Field id="settings-from" label="Sender name" hint="Replies go out as “Sender name <address>”.">
            <input id="settings-from" value={fromName} disabled={!member} onInput={(e) => setFromName(val(e))} aria-describedby="settings-from-hint" />
          </Field>
        </div>
        <p class="small muted">
          Created <Time iso={inbox.created_at} exact />. {inbox.unread} unread, {inbox.drafts} drafts.
        </p>
        {member && (
          <button type="submit" class="btn primary" disabled={save.busy}>
            Save
          </button>
        )}
      </form>
    </Card>
  );
}

const PALETTE = ['#E93D82', '#F76B15', '#FFC53D', '#30A46C', '#12A594', '#0090FF', '#6E56CF', '#8D8D8D'];

function LabelsSection({ id }: { id: string }) {
  const labels = useGet(url('/inboxes/:inbox/labels', { inbox: id }));
  const member = useCan('member');
  const [editing, setEditing] = useState<string | null>(null);
  const add = useAction(async (name: string, color: string) => {
    await post(url('/inboxes/:inbox/labels', { inbox: id }), { name, color });
    labels.reload();
  });
  const edit = useAction(async (l: InboxLabel, name: string, color: string) => {
    await patch(url('/inboxes/:inbox/labels/:label', { inbox: id, label: l.id }), { name, color });
    setEditing(null);
    labels.reload();
  });
  const remove = useAction(async (l: InboxLabel) => {
    if (!(await ask(`Delete the label “${l.name}”? It is taken off every conversation that has it.`, { confirm: 'Delete label' }))) return;
    await del(url('/inboxes/:inbox/labels/:label', { inbox: id, label: l.id }));
    labels.reload();
  });
  return (
    <Section title="Labels">
      <Card>
        <ErrorBox error={labels.error ?? remove.error ?? edit.error} />
        {labels.data && !labels.data.data.length && <p class="muted">No labels yet.</p>}
        {labels.data && labels.data.data.length > 0 && (
          <ul class="label-list">
            {labels.data.data.map((l) =>
              editing === l.id ? (
                <li key={l.id}>
                  <LabelForm
                    id={`label-${l.id}`}
                    initial={l}
                    submit="Save"
                    busy={edit.busy}
                    onSubmit={(n, c) => edit.run(l, n, c)}
                    onCancel={() => setEditing(null)}
                  />
                </li>
              ) : (
                <li key={l.id} class="label-row">
                  <Swatch color={l.color} />
                  <span>{l.name}</span>
                  {member && (
                    <span class="label-actions">
                      <button type="button" class="btn ghost small" aria-label={`Edit label ${l.name}`} onClick={() => setEditing(l.id)}>
                        Edit
                      </button>
                      <button type="button" class="btn ghost small danger" aria-label={`Delete label ${l.name}`} onClick={() => void remove.run(l)}>
                        Delete
                      </button>
                    </span>
                  )}
                </li>
              ),
            )}
          </ul>
        )}
        {member && (
          <>
            <ErrorBox error={add.error} />
            <LabelForm id="label-new" label="New label" submit="Add label" busy={add.busy} onSubmit={(n, c) => add.run(n, c)} />
          </>
        )}
      </Card>
    </Section>
  );
}

/** A label's name and colour: a new one (emptied once added) or one being edited. */
function LabelForm(props: {
  id: string;
  label?: string;
  initial?: InboxLabel;
  submit: string;
  busy: boolean;
  onSubmit: (name: string, color: string) => Promise<boolean>;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(props.initial?.name ?? '');
  const [color, setColor] = useState(props.initial?.color ?? PALETTE[0]!);
  const palette = PALETTE.includes(color) ? PALETTE : [color, ...PALETTE];
  return (
    <form
      class="label-add"
      onSubmit={async (e) => {
        e.preventDefault();
        if ((await props.onSubmit(name.trim(), color)) && !props.initial) setName('');
      }}
    >
      <Field id={`${props.id}-name`} label={props.label ?? 'Label name'}>
        <input id={`${props.id}-name`} required maxLength={64} value={name} onInput={(e) => setName(val(e))} />
      </Field>
      <fieldset class="palette">
        <legend class="palette-legend">Colour</legend>
        {palette.map((c) => (
          <label key={c} class="palette-choice">
            <input type="radio" name={`${props.id}-color`} value={c} checked={color === c} onChange={() => setColor(c)} />
            <Swatch color={c} />
            <span class="sr-only">{c}</span>
          </label>
        ))}
      </fieldset>
      <div class="composer-actions">
        <button type="submit" class="btn" disabled={props.busy || !name.trim()}>
          {props.submit}
        </button>
        {props.onCancel && (
          <button type="button" class="btn ghost" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

type Tone = NonNullable<InboxAgent['tone']>;
type Action = InboxAgent['actions'][number];
const TONE_NAMES: Record<Tone, string> = {
  concise_professional: 'Concise, professional',
  concise_casual: 'Concise, casual',
  expanded_professional: 'Detailed, professional',
  expanded_casual: 'Detailed, casual',
};
const ACTION_NAMES: Record<Action, string> = {
  draft_reply: 'Draft a reply',
  forward_thread: 'Forward the conversation',
  add_labels: 'Add labels',
  assign_thread: 'Assign to a teammate',
  mark_as_spam: 'Mark as spam',
  archive: 'Archive',
  move_to_trash: 'Move to trash',
};

function AgentSection({ id }: { id: string }) {
  const agent = useGet(url('/inboxes/:inbox/agent', { inbox: id }));
  if (agent.error?.status === 404) return null;
  return (
    <Section title="Inbox agent">
      <Card>
        <ErrorBox error={agent.error} />
        {!agent.data && !agent.error && <Loading />}
        {agent.data && <AgentForm id={id} agent={agent.data} onSaved={agent.reload} />}
      </Card>
    </Section>
  );
}

function AgentForm({ id, agent, onSaved }: { id: string; agent: InboxAgent; onSaved: () => void }) {
  const member = useCan('member');
  const [instructions, setInstructions] = useState(agent.instructions ?? '');
  const [tone, setTone] = useState<string>(agent.tone ?? '');
  const [actions, setActions] = useState<Action[]>(agent.actions);
  const save = useAction(async () => {
    await patch(url('/inboxes/:inbox/agent', { inbox: id }), { instructions: instructions.trim() || null, tone: tone || null, actions });
    notify('Agent settings saved.');
    onSaved();
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <p class="muted small">
        The agent reads each new message with these instructions and prepares drafts for your team to review. It never sends on its own, and it runs only when
        the server's operator has given Posthorn a model (<code>[agent]</code> in the configuration).
      </p>
      <ErrorBox error={save.error} />
      <Field id="agent-instructions" label="Instructions" hint={`${instructions.length.toLocaleString()} of 4,000 characters.`}>
        <textarea
          id="agent-instructions"
          rows={6}
          maxLength={4000}
          disabled={!member}
          value={instructions}
          onInput={(e) => setInstructions(val(e))}
          aria-describedby="agent-instructions-hint"
        />
      </Field>
      <Field id="agent-tone" label="Tone">
        <select id="agent-tone" value={tone} disabled={!member} onChange={(e) => setTone(val(e))}>
          <option value="">Default</option>
          {(Object.keys(TONE_NAMES) as Tone[]).map((t) => (
            <option value={t}>{TONE_NAMES[t]}</option>
          ))}
        </select>
      </Field>
      <fieldset class="checks">
        <legend>What it may do</legend>
        {(Object.keys(ACTION_NAMES) as Action[]).map((a) => (
          <label class="check" key={a}>
            <input
              type="checkbox"
              disabled={!member}
              checked={actions.includes(a)}
              onChange={(e) => setActions(e.currentTarget.checked ? [...actions, a] : actions.filter((x) => x !== a))}
            />
            {ACTION_NAMES[a]}
          </label>
        ))}
      </fieldset>
      {member && (
        <button type="submit" class="btn primary" disabled={save.busy}>
          Save agent settings
        </button>
      )}
    </form>
  );
}

function DangerSection({ inbox }: { inbox: Inbox }) {
  const member = useCan('member');
  const remove = useAction(async () => {
    if (!(await ask(`Delete the inbox ${inbox.email_address} with all its conversations and drafts? This cannot be undone.`, { confirm: 'Delete inbox' })))
      return;
    await del(url('/inboxes/:inbox', { inbox: inbox.id }));
    notify('Inbox deleted.');
    navigate('/dashboard/inboxes');
  });
  if (!member) return null;
  return (
    <Section title="Delete">
      <Card>
        <ErrorBox error={remove.error} />
        <p class="muted">Mail to {inbox.email_address} is then received as before, without an inbox.</p>
        <button type="button" class="btn danger" disabled={remove.busy} onClick={() => void remove.run()}>
          Delete inbox
        </button>
      </Card>
    </Section>
  );
}
