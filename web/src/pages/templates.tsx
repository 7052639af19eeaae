// Templates (docs/api.md §20): the list, a new draft, and a template's editor — its fields and
// variables, HTML and text beside a live preview rendered with the variables' fallbacks — with
// Save (PATCH, the latest version), Publish, Duplicate and Delete, all through the REST API; a
// published template links to its version history (template-versions.tsx).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Template, TemplateSummary, TemplateVariable } from '../../../src/schemas/templates';
import { del, patch, post, url, page } from '../api';
import { navigate, setLeaveGuard } from '../router';
import { type DocNode, emailHtml } from '../editor/email-html';
import { LazyBlockEditor } from '../editor/lazy';
import { ContentModeTabs, SourceNotice } from '../editor/content-mode';
import { blocksOf, starterDoc } from '../editor/mode';
import {
  Badge,
  Card,
  Code,
  CopyButton,
  Dialog,
  Empty,
  ErrorBox,
  Field,
  FormDialog,
  KeyValue,
  Loading,
  notify,
  PagedTable,
  PageHeader,
  Tabs,
  Time,
  useAction,
  useGet,
  usePaged,
  val,
  type InputEvent,
  ask,
  useLeaveWarning,
} from '../ui';
import { renderPreview, type Values } from '../template-text';
import { EmailPreview } from './preview';
import { useCan } from '../role';

type VariableType = TemplateVariable['type'];

/** The status as the list and the editor show it: draft or published, and unpublished changes. */
function Status({ t }: { t: TemplateSummary }) {
  return (
    <span class="badges">
      <Badge value={t.status} />
      {t.has_unpublished_versions && <span class="badge amber as-written">Unpublished changes</span>}
    </span>
  );
}

export function TemplatesPage() {
  const paged = usePaged('/templates');
  const [creating, setCreating] = useState(false);
  const create = () => (
    <button type="button" class="btn primary" onClick={() => setCreating(true)}>
      New template
    </button>
  );
  return (
    <>
      <PageHeader need="member" title="Templates" description="Emails with variables, sent by id or alias once published." actions={create()} />
      <PagedTable
        paged={paged}
        caption="Templates"
        href={(t) => page`/dashboard/templates/${t.id}`}
        empty={
          <Empty title="No templates yet." action={create()}>
            Create one here, or from code with{' '}
            <code>
              resend.templates.create({'{'} name, html {'}'})
            </code>
            , then publish it and send it with{' '}
            <code>
              template: {'{'} id, variables {'}'}
            </code>{' '}
            on <code>resend.emails.send()</code>.
          </Empty>
        }
        columns={[
          {
            label: 'Name',
            class: 'name-cell',
            render: (t) => (
              <>
                {t.name}
                {/* At phone width the alias goes under the name, its column hidden. */}
                {t.alias && <span class="narrow-only mono small muted">{t.alias}</span>}
              </>
            ),
          },
          { label: 'Alias', class: 'name-cell wide-only', render: (t) => (t.alias ? <span class="mono small">{t.alias}</span> : <span class="muted">—</span>) },
          { label: 'Status', render: (t) => <Status t={t} /> },
          { label: 'Updated', class: 'nowrap', render: (t) => <Time iso={t.updated_at} /> },
        ]}
      />
      <CreateDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

const STARTER_HTML = '<p>Hello,</p>\n<p></p>\n';

function CreateDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [form, setForm] = useState({ name: '', alias: '', from: '', subject: '' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const action = useAction(async () => {
    const t = await post('/templates', {
      name: form.name,
      html: STARTER_HTML,
      alias: form.alias.trim() || undefined,
      from: form.from.trim() || undefined,
      subject: form.subject || undefined,
    });
    onClose();
    setForm({ name: '', alias: '', from: '', subject: '' });
    notify('Template created as a draft.');
    navigate(page`/dashboard/templates/${t.id}`);
  });
  return (
    <FormDialog open={open} title="New template" onClose={onClose} action={action} submit="Create template">
      <Field id="n-name" label="Name">
        <input id="n-name" required value={form.name} onInput={set('name')} />
      </Field>
      <Field id="n-alias" label="Alias (optional)" hint="Send by this name instead of the id: letters, digits, dots, dashes and underscores.">
        <input
          id="n-alias"
          class="mono"
          spellcheck={false}
          autocapitalize="off"
          placeholder="order-confirmation"
          value={form.alias}
          onInput={set('alias')}
          aria-describedby="n-alias-hint"
        />
      </Field>
      <Field id="n-from" label="From (optional)">
        <input id="n-from" placeholder="Acme <hello@example.com>" value={form.from} onInput={set('from')} />
      </Field>
      <Field id="n-subject" label="Subject (optional)">
        <input id="n-subject" value={form.subject} onInput={set('subject')} />
      </Field>
    </FormDialog>
  );
}

export function TemplatePage({ id }: { id: string }) {
  const t = useGet(url('/templates/:id_or_alias', { id_or_alias: id }));
  if (t.error) return <ErrorBox error={t.error} />;
  if (!t.data) return <Loading />;
  return <Editor key={t.data.id} t={t.data} reload={t.reload} />;
}

// ---------------------------------------------------------------------------------------------
// The editor's form and the PATCH body made of it
// ---------------------------------------------------------------------------------------------

interface VarRow {
  /** A stable key for the row (its position changes when one above is removed). */
  uid: number;
  key: string;
  type: VariableType;
  fallback: string;
}

interface Form {
  name: string;
  alias: string;
  from: string;
  reply_to: string;
  subject: string;
  html: string;
  text: string;
  variables: VarRow[];
}

let uids = 0;

function toForm(t: Template): Form {
  return {
    name: t.name,
    alias: t.alias ?? '',
    from: t.from ?? '',
    reply_to: (t.reply_to ?? []).join(', '),
    subject: t.subject ?? '',
    html: t.html,
    text: t.text ?? '',
    variables: t.variables.map((v) => ({ uid: ++uids, key: v.key, type: v.type, fallback: v.fallback_value === null ? '' : String(v.fallback_value) })),
  };
}

/** A fallback as the API takes it: none, a number for a number variable (when it reads as one), else the text. */
function fallbackValue(v: VarRow): string | number | null {
  if (v.fallback === '') return null;
  if (v.type === 'number' && v.fallback.trim() !== '' && Number.isFinite(Number(v.fallback))) return Number(v.fallback);
  return v.fallback;
}

/** The fields of a PATCH (docs/api.md §20.2): an empty optional field clears it. */
function toBody(f: Form, t: Template) {
  const replyTo = f.reply_to
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    name: f.name,
    alias: f.alias.trim() || null,
    from: f.from.trim() || null,
    reply_to: replyTo.length ? replyTo : null,
    subject: f.subject || null,
    html: f.html,
    // Empty text: derived from the html when sent (null), unless the template had no text part ("").
    text: f.text || (t.text === '' ? '' : null),
    variables: f.variables.map((v) => ({ key: v.key.trim(), type: v.type, fallback_value: fallbackValue(v) })),
  };
}

type Body = ReturnType<typeof toBody>;

/** The fields of `next` that differ from `saved`: a PATCH sends only what changed. */
function changes(next: Body, saved: Body): Partial<Body> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(next) as (keyof Body)[]) if (JSON.stringify(next[k]) !== JSON.stringify(saved[k])) out[k] = next[k];
  return out as Partial<Body>;
}

// ---------------------------------------------------------------------------------------------
// The editor
// ---------------------------------------------------------------------------------------------

function Editor({ t, reload }: { t: Template; reload: () => void }) {
  const [form, setForm] = useState(() => toForm(t));
  const [saved, setSaved] = useState(() => toBody(toForm(t), t));
  const [deleting, setDeleting] = useState(false);
  const body = toBody(form, t);
  const diff = changes(body, saved);
  const dirty = Object.keys(diff).length > 0;
  useLeaveWarning(dirty);
  // Blocks when the HTML is the block editor's own (editor/mode.ts), else the HTML view.
  const [doc, setDoc] = useState<DocNode | null>(() => blocksOf(t.html));
  const [mode, setMode] = useState<'blocks' | 'source'>(doc ? 'blocks' : 'source');
  const onDoc = (d: DocNode) => {
    setDoc(d);
    setForm((f) => ({ ...f, html: emailHtml(d) }));
  };
  const startBlocks = async () => {
    const untouched = !form.html.trim() || form.html === STARTER_HTML;
    if (!untouched && !(await ask('Start over with blocks? The HTML written by hand is replaced.', { confirm: 'Start over' }))) return;
    onDoc(starterDoc(null));
    setMode('blocks');
  };
  const set = (k: Exclude<keyof Form, 'variables'>) => (e: InputEvent) => setForm((f) => ({ ...f, [k]: val(e) }));

  /** PATCH what changed, if anything; the error of an earlier action goes (this one's, if any, takes its place). */
  const persist = async () => {
    for (const a of [save, publish, duplicate]) a.setError(null);
    if (!dirty) return;
    await patch(url('/templates/:id_or_alias', { id_or_alias: t.id }), diff);
    setSaved(body);
  };
  const save = useAction(async () => {
    await persist();
    reload();
    notify(t.status === 'published' ? 'Saved. Publish to send this version.' : 'Draft saved.');
  });
  const publish = useAction(async () => {
    await persist();
    await post(url('/templates/:id_or_alias/publish', { id_or_alias: t.id }));
    reload();
    notify('Published: sends use this version now.');
  });
  const duplicate = useAction(async () => {
    await persist();
    const copy = await post(url('/templates/:id_or_alias/duplicate', { id_or_alias: t.id }));
    notify(`Duplicated as “${form.name} (copy)”, a draft.`);
    navigate(page`/dashboard/templates/${copy.id}`);
  });
  const remove = useAction(async () => {
    await del(url('/templates/:id_or_alias', { id_or_alias: t.id }));
    notify(`Deleted “${t.name}”.`);
    setLeaveGuard(null);
    navigate('/dashboard/templates', { force: true });
  });
  const busy = save.busy || publish.busy || duplicate.busy || remove.busy;
  const error = save.error ?? publish.error ?? duplicate.error;

  // Ctrl+S / ⌘S saves, as in an editor.
  const saveRef = useRef(() => {});
  saveRef.current = () => void (dirty && !busy && save.run());
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault();
        saveRef.current();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  // An error is shown above the fields: bring it into view when it comes.
  const errorRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) errorRef.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [error]);

  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/templates', label: 'Templates' }}
        title={t.name}
        description={
          <span class="header-meta">
            <Status t={t} />
            <span class="muted small">
              Updated <Time iso={t.updated_at} />
              {t.published_at && (
                <>
                  {' · '}published <Time iso={t.published_at} />
                </>
              )}
            </span>
          </span>
        }
        actions={
          <div class="template-actions">
            <button type="button" class="btn danger ghost" disabled={busy} onClick={() => setDeleting(true)}>
              Delete
            </button>
            {t.status === 'published' && (
              <a class="btn" href={`/dashboard/templates/${t.id}/versions`}>
                History
              </a>
            )}
            <button type="button" class="btn" disabled={busy} onClick={() => duplicate.run()}>
              Duplicate
            </button>
            <button type="button" class="btn" disabled={busy || !dirty} onClick={() => save.run()} aria-keyshortcuts="Control+S Meta+S" title="Save (Ctrl+S)">
              {dirty ? 'Save' : 'Saved'}
            </button>
            <button
              type="button"
              class="btn primary"
              disabled={busy || (!dirty && t.status === 'published' && !t.has_unpublished_versions)}
              onClick={() => publish.run()}
            >
              {t.status === 'published' && !dirty && !t.has_unpublished_versions ? 'Published' : 'Publish'}
            </button>
          </div>
        }
      />
      <div ref={errorRef}>
        <ErrorBox error={error} />
      </div>
      <p class="sr-only" role="status">
        {dirty ? 'Unsaved changes.' : ''}
      </p>
      <div class="editor template-editor">
        <div class="editor-fields">
          <Card>
            <h2 class="card-title">Details</h2>
            <Field id="t-name" label="Name">
              <input id="t-name" value={form.name} onInput={set('name')} />
            </Field>
            <Field id="t-alias" label="Alias" hint="Optional: sends may name the template by it instead of the id.">
              <input
                id="t-alias"
                class="mono"
                spellcheck={false}
                autocapitalize="off"
                value={form.alias}
                onInput={set('alias')}
                aria-describedby="t-alias-hint"
              />
            </Field>
            <Field id="t-from" label="From">
              <input id="t-from" placeholder="Acme <hello@example.com>" value={form.from} onInput={set('from')} />
            </Field>
            <Field id="t-reply-to" label="Reply-to" hint="One address or several, separated by commas.">
              <input id="t-reply-to" value={form.reply_to} onInput={set('reply_to')} aria-describedby="t-reply-to-hint" />
            </Field>
            <Field id="t-subject" label="Subject">
              <input id="t-subject" value={form.subject} onInput={set('subject')} />
            </Field>
            <p class="hint">From, reply-to and subject are used when the send does not give its own.</p>
          </Card>
          <Card>
            <Variables rows={form.variables} onChange={(variables) => setForm((f) => ({ ...f, variables }))} />
          </Card>
          <Card>
            <h2 class="card-title">Content</h2>
            <ContentModeTabs mode={mode} hasDoc={!!doc} setMode={setMode} onStartBlocks={() => void startBlocks()} />
            <div role="tabpanel" aria-labelledby={`tab-${mode}`} class="tab-panel">
              {mode === 'blocks' && doc ? (
                <LazyBlockEditor
                  doc={doc}
                  onChange={onDoc}
                  placeholders={form.variables.filter((v) => v.key.trim()).map((v) => ({ name: v.key.trim(), label: `Variable ${v.key.trim()}` }))}
                  label="Email content"
                />
              ) : (
                <>
                  <SourceNotice fromBlocks={!!doc} onStartBlocks={() => void startBlocks()} />
                  <Field id="t-html" label="HTML" hint="Write a variable as {{{KEY}}}; {{#KEY}}…{{/KEY}} shows a part only when KEY has a value.">
                    <textarea
                      id="t-html"
                      class="mono code-input"
                      rows={16}
                      spellcheck={false}
                      autocapitalize="off"
                      wrap="off"
                      value={form.html}
                      onInput={(e) => {
                        setDoc(null);
                        set('html')(e);
                      }}
                      aria-describedby="t-html-hint"
                    />
                  </Field>
                </>
              )}
            </div>
            <Field
              id="t-text"
              label="Plain text"
              hint={t.text === '' ? 'Left empty, the email has no text part.' : 'Leave empty to make it from the HTML when sent.'}
            >
              <textarea
                id="t-text"
                class="mono code-input"
                rows={8}
                spellcheck={false}
                autocapitalize="off"
                value={form.text}
                onInput={set('text')}
                aria-describedby="t-text-hint"
              />
            </Field>
          </Card>
          <SendCard t={t} />
        </div>
        <Preview form={form} />
      </div>
      <DeleteDialog open={deleting} name={t.name} action={remove} onClose={() => setDeleting(false)} />
    </>
  );
}

const TYPES: VariableType[] = ['string', 'number'];

/** The variables: a key, a type and a fallback each; rows added and removed in place. */
function Variables({ rows, onChange }: { rows: VarRow[]; onChange: (rows: VarRow[]) => void }) {
  const member = useCan('member');
  const addRef = useRef<HTMLButtonElement>(null);
  const [focusKey, setFocusKey] = useState<number | null>(null);
  useEffect(() => {
    if (focusKey !== null) document.getElementById(`v-key-${focusKey}`)?.focus();
  }, [focusKey]);
  const update = (uid: number, change: Partial<VarRow>) => onChange(rows.map((r) => (r.uid === uid ? { ...r, ...change } : r)));
  return (
    <fieldset class="variables" aria-describedby="vars-hint">
      <legend class="card-title">Variables</legend>
      <p class="hint" id="vars-hint">
        A send gives each variable a value; one left out takes its fallback. A variable without a fallback must be given.
      </p>
      {rows.length > 0 && (
        <div class="var-grid">
          <div class="var-head" aria-hidden="true">
            <span>Key</span>
            <span>Type</span>
            <span>Fallback</span>
            <span />
          </div>
          {rows.map((r, i) => (
            <div class="var-row" key={r.uid}>
              <input
                id={`v-key-${r.uid}`}
                class="mono v-key"
                aria-label={`Variable ${i + 1}: key`}
                spellcheck={false}
                autocapitalize="off"
                placeholder="KEY"
                value={r.key}
                onInput={(e) => update(r.uid, { key: val(e) })}
              />
              <select class="v-type" aria-label={`Variable ${i + 1}: type`} value={r.type} onChange={(e) => update(r.uid, { type: val(e) as VariableType })}>
                {TYPES.map((x) => (
                  <option value={x}>{x}</option>
                ))}
              </select>
              <input
                class="v-fallback"
                aria-label={`Variable ${i + 1}: fallback`}
                placeholder="No fallback"
                inputMode={r.type === 'number' ? 'decimal' : undefined}
                value={r.fallback}
                onInput={(e) => update(r.uid, { fallback: val(e) })}
              />
              <button
                type="button"
                class="btn ghost small v-remove"
                aria-label={`Remove variable ${i + 1}${r.key ? ` (${r.key})` : ''}`}
                onClick={() => {
                  onChange(rows.filter((x) => x.uid !== r.uid));
                  addRef.current?.focus();
                }}
              >
                ✕
              </button>
            </div>
          ))}
        </div>
      )}
      <button
        type="button"
        ref={addRef}
        disabled={!member}
        class="btn small"
        onClick={() => {
          const uid = ++uids;
          onChange([...rows, { uid, key: '', type: 'string', fallback: '' }]);
          setFocusKey(uid);
        }}
      >
        Add variable
      </button>
    </fieldset>
  );
}

/** The subject, HTML and text rendered as a send would with the fallbacks (no value: the placeholder shows). */
function Preview({ form }: { form: Form }) {
  const [tab, setTab] = useState<'html' | 'text'>('html');
  const values = useMemo(() => {
    const v: Values = Object.create(null);
    for (const r of form.variables) {
      const f = fallbackValue(r);
      if (r.key.trim() && f !== null) v[r.key.trim()] = f;
    }
    return v;
  }, [form.variables]);
  const subject = renderPreview(form.subject, values, 'subject');
  const html = renderPreview(form.html, values, 'html');
  const text = renderPreview(form.text, values, 'text');
  const shown = tab === 'html' ? html : text;
  return (
    <Card class="live-preview template-preview">
      <h2 class="card-title">Preview</h2>
      <dl class="preview-head">
        <div>
          <dt>From</dt>
          <dd>{form.from || <span class="muted">given by the send</span>}</dd>
        </div>
        <div>
          <dt>Subject</dt>
          <dd>
            <strong>
              {subject.ok ? subject.out || <span class="muted">given by the send</span> : <span class="error-text">Not a valid template: {subject.error}</span>}
            </strong>
          </dd>
        </div>
      </dl>
      <Tabs
        label="Preview of"
        current={tab}
        onChange={(x) => setTab(x as 'html' | 'text')}
        tabs={[
          { id: 'html', label: 'HTML' },
          { id: 'text', label: 'Plain text' },
        ]}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`} class="tab-panel">
        {!shown.ok ? (
          <p class="error-box">Not a valid template yet: {shown.error}</p>
        ) : tab === 'html' ? (
          <EmailPreview html={shown.out} height="max(360px, calc(100vh - 300px))" />
        ) : form.text ? (
          <Code wrap label="Plain text preview">
            {shown.out}
          </Code>
        ) : (
          <p class="muted">No text of its own: {form.html ? 'made from the HTML when sent.' : 'none.'}</p>
        )}
      </div>
      <p class="hint">Variables show their fallback; one without a fallback shows as its {'{{{KEY}}}'} placeholder.</p>
    </Card>
  );
}

/** How to send with the template: its id or alias, and `template` on POST /emails (docs/api.md §20.4). */
function SendCard({ t }: { t: Template }) {
  const ref = t.alias ?? t.id;
  const vars = t.variables.length ? `, variables: { ${t.variables.map((v) => `${v.key}: ${v.type === 'number' ? '0' : "'…'"}`).join(', ')} }` : '';
  const snippet = `await resend.emails.send({\n  to: 'someone@example.com',\n  template: { id: '${ref}'${vars} },\n});`;
  return (
    <Card class="send-card">
      <div class="row-between">
        <h2 class="card-title">Send with it</h2>
        <CopyButton text={snippet} label="Copy code" />
      </div>
      {t.status === 'draft' && <p class="callout">Publish the template first: sends use its published version only.</p>}
      {t.has_unpublished_versions && (
        <p class="callout">
          Sends use the version published <Time iso={t.published_at} /> until you publish the changes.
        </p>
      )}
      <Code wrap label="Code to send with the template">
        {snippet}
      </Code>
      <KeyValue
        rows={[
          [
            'ID',
            <span class="copy-cell">
              <span class="mono small break">{t.id}</span>
              <CopyButton text={t.id} />
            </span>,
          ],
          ['Created', <Time iso={t.created_at} exact />],
        ]}
      />
    </Card>
  );
}

function DeleteDialog({
  open,
  name,
  action,
  onClose,
}: {
  open: boolean;
  name: string;
  action: { run: () => unknown; busy: boolean; error: { message: string } | null };
  onClose: () => void;
}) {
  return (
    <Dialog open={open} title="Delete template" onClose={onClose}>
      <ErrorBox error={action.error} />
      <p class="break-words">
        Delete <strong>{name}</strong>? Emails and automation steps that send it will fail. This cannot be undone.
      </p>
      <div class="form-actions">
        <button type="button" class="btn" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="btn danger solid" disabled={action.busy} onClick={() => action.run()}>
          Delete template
        </button>
      </div>
    </Dialog>
  );
}
