// Shared building blocks of every page: data hooks, tables with cursor paging, badges, dialogs,
// form fields, copy buttons, empty and error states, notices.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ListOf } from '../../src/schemas/common';
import { type Answer, ApiFailure, download, page, qs, request, type Target, url } from './api';
import { setLeaveGuard, setQuery, useLocation } from './router';
import { EMAIL_BADGES } from '../../src/event-catalogue';
import { type BounceClass, SENDER_CLASSES } from '../../src/mail/bounce-class-names';
import type { Role } from '../../src/schemas/accounts';
import { useCan } from './role';

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | null;
  loading: boolean;
  reload: () => void;
}

/** GET `path` (null: nothing yet), again whenever `path` changes or `reload` is called; `data` is the route's answer. */
export function useGet<T extends Target<'GET'>>(path: T | null): Loaded<Answer<'GET', T>> {
  return useAnswer<Answer<'GET', T>>(path);
}

/** `useGet` for the answer type its caller derived from the route. */
function useAnswer<A>(path: string | null): Loaded<A> {
  const [state, setState] = useState<{ data?: A; error: ApiFailure | null; loading: boolean }>({ error: null, loading: !!path });
  const [n, setN] = useState(0);
  useEffect(() => {
    if (!path) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    (request('GET', path) as Promise<A>).then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [path, n]);
  return { data: state.data, error: state.error, loading: state.loading, reload: useCallback(() => setN((x) => x + 1), []) };
}

/** The item of a list answer (docs/api.md §4). */
export type ItemOf<A> = A extends { object: 'list'; data: (infer I)[] } ? I : never;

/** A page of a list, with the means to turn pages. */
export interface Paged<I> extends Loaded<ListOf<I>> {
  rows: I[];
  hasNext: boolean;
  hasPrev: boolean;
  next: () => void;
  prev: () => void;
}

/**
 * A page of a list through the API's cursors (docs/api.md §4), the cursor kept in the URL
 * (`after`/`before`) so that back and reload land on the same page. `base` names a list route
 * without a query: the filters are `params`.
 */
export function usePaged<T extends Target<'GET'>>(
  base: T,
  params: Record<string, string | null | undefined> = {},
  limit = 20,
): Paged<ItemOf<Answer<'GET', T>>> {
  const { query } = useLocation();
  const after = query.get('after');
  const before = query.get('before');
  // The cursors are the items' ids.
  const res = useAnswer<ListOf<ItemOf<Answer<'GET', T>> & { id: string }>>(base + qs({ ...params, limit, after, before }));
  const rows = res.data?.data ?? [];
  const hasNext = before ? true : !!res.data?.has_more;
  const hasPrev = !!after || (!!before && !!res.data?.has_more);
  return {
    ...res,
    rows,
    hasNext: hasNext && rows.length > 0,
    hasPrev,
    next: () => setQuery({ after: rows[rows.length - 1]?.id, before: null }),
    prev: () => setQuery({ before: rows[0]?.id, after: null }),
  };
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSec = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function ago(iso: string | null | undefined): string {
  if (!iso) return '—';
  const s = (Date.parse(iso) - Date.now()) / 1000;
  const abs = Math.abs(s);
  if (abs < 45) return s < 0 ? 'just now' : 'in a moment';
  if (abs < 3600) return relative.format(Math.round(s / 60), 'minute');
  if (abs < 86400) return relative.format(Math.round(s / 3600), 'hour');
  if (abs < 86400 * 7) return relative.format(Math.round(s / 86400), 'day');
  return dateTime.format(new Date(iso));
}

export function Time({ iso, exact }: { iso: string | null | undefined; exact?: boolean }) {
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={dateTimeSec.format(d)}>
      {exact ? dateTimeSec.format(d) : ago(iso)}
    </time>
  );
}

export const num = (n: number | null | undefined) => (n ?? 0).toLocaleString();
export const pct = (r: number | null | undefined, digits = 1) => `${((r ?? 0) * 100).toFixed(digits)}%`;

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// ---------------------------------------------------------------------------------------------
// Page structure
// ---------------------------------------------------------------------------------------------

export function PageHeader({
  title,
  description,
  actions,
  back,
  need,
}: {
  title: ComponentChildren;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  back?: { href: string; label: string };
  /** The least role the actions need (docs/api.md §19.4): below it they are not shown. */
  need?: Role;
}) {
  if (!useCan(need ?? 'viewer')) actions = undefined;
  useEffect(() => {
    document.title = `${typeof title === 'string' ? title : 'Posthorn'} · Posthorn`;
  }, [title]);
  return (
    <header class="page-header">
      <div>
        {back && (
          <a class="back" href={back.href}>
            ← {back.label}
          </a>
        )}
        <h1>{title}</h1>
        {description && <p class="muted">{description}</p>}
      </div>
      {actions && <div class="actions">{actions}</div>}
    </header>
  );
}

export function Section({ title, actions, children, need }: { title: string; actions?: ComponentChildren; children: ComponentChildren; need?: Role }) {
  if (!useCan(need ?? 'viewer')) actions = undefined;
  return (
    <section class="section" aria-label={title}>
      <div class="section-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Card({ children, class: cls = '' }: { children: ComponentChildren; class?: string }) {
  return <div class={`card ${cls}`}>{children}</div>;
}

export function Empty({ title, children, action }: { title: string; children?: ComponentChildren; action?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <p class="muted">{children}</p>}
      {action}
    </div>
  );
}

export function ErrorBox({ error }: { error: { message: string } | null | undefined }) {
  if (!error) return null;
  return (
    <div class="error-box" role="alert">
      {error.message}
    </div>
  );
}

export function Loading() {
  return (
    <div class="loading" role="status" aria-live="polite">
      Loading…
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

export interface Column<T> {
  label: string;
  render: (row: T) => ComponentChildren;
  class?: string;
}

/**
 * A table wider than its box scrolls sideways; while it does, its box takes the focus (a named
 * region), so a keyboard can scroll it too (WCAG 2.1.1). Only then: a table that fits is no tab stop.
 */
function useScrollableFocus(ref: { current: HTMLElement | null }, label: string) {
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) {
        el.tabIndex = 0;
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', label);
      } else {
        for (const a of ['tabindex', 'role', 'aria-label']) el.removeAttribute(a);
      }
    };
    update();
    const watch = new ResizeObserver(update);
    watch.observe(el);
    if (el.firstElementChild) watch.observe(el.firstElementChild);
    return () => watch.disconnect();
  }, [label]);
}

/** A list: a row links to `href(row)` when given (the first cell holds the link, for keyboards). */
export function Table<T extends { id: string }>({
  columns,
  rows,
  href,
  caption,
  cards,
}: {
  columns: Column<T>[];
  rows: T[];
  href?: (r: T) => string;
  caption: string;
  /** On a phone, each row a card of labelled lines instead of a table to scroll (styles.css, "Narrow screens"). */
  cards?: boolean;
}) {
  const wrap = useRef<HTMLDivElement>(null);
  useScrollableFocus(wrap, caption);
  return (
    <div class={cards ? 'table-wrap cards' : 'table-wrap'} ref={wrap}>
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" class={c.class}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} class={href ? 'linked' : ''}>
              {columns.map((c, i) => (
                <td class={c.class} data-label={c.label}>
                  {href && i === 0 ? <a href={href(r)}>{c.render(r)}</a> : c.render(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({ hasPrev, hasNext, prev, next }: { hasPrev: boolean; hasNext: boolean; prev: () => void; next: () => void }) {
  if (!hasPrev && !hasNext) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="btn" disabled={!hasPrev} onClick={prev}>
        ← Newer
      </button>
      <button type="button" class="btn" disabled={!hasNext} onClick={next}>
        Older →
      </button>
    </nav>
  );
}

/** A paged list with its loading, error and empty states. */
export function PagedTable<T extends { id: string }>(props: {
  paged: Paged<T>;
  columns: Column<T>[];
  href?: (r: T) => string;
  caption: string;
  empty: ComponentChildren;
}) {
  const { paged } = props;
  if (paged.error) return <ErrorBox error={paged.error} />;
  if (paged.loading && !paged.data) return <Loading />;
  if (!paged.rows.length) return <>{props.empty}</>;
  return (
    <>
      {/* A paged list is a main list: cards on a phone. */}
      <Table columns={props.columns} rows={paged.rows} href={props.href} caption={props.caption} cards />
      <Pager {...paged} />
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Small pieces
// ---------------------------------------------------------------------------------------------

/** Badge colours by value: an email's statuses and events are the catalogue's (src/event-catalogue.ts), the rest other records' states. */
const TONES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(EMAIL_BADGES).map(([name, b]) => [name, b.tone])),
  verified: 'green',
  enabled: 'green',
  success: 'green',
  pending: 'amber',
  attempting: 'amber',
  not_started: 'gray',
  draft: 'gray',
  published: 'green',
  sending: 'blue',
  partially_verified: 'amber',
  temporary_failure: 'amber',
  disabled: 'gray',
  partially_failed: 'red',
  owner: 'violet',
  admin: 'blue',
  viewer: 'gray',
  member: 'gray',
  pass: 'green',
  fail: 'red',
  warn: 'amber',
  unavailable: 'gray',
  held: 'amber',
  none: 'gray',
  neutral: 'gray',
  simulated: 'violet',
  softfail: 'amber',
  running: 'blue',
  completed: 'green',
  cancelled: 'gray',
  waiting: 'amber',
  skipped: 'gray',
};

/**
 * Download a list's export as CSV (docs/api.md §4.1) with the filters the page shows: `path` is the
 * export route with those filters as its query. A failure is told in a notice.
 */
export function ExportButton({ path, what }: { path: Target<'GET'>; what: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class="btn"
      title={`Download ${what} matching the filters as a CSV file`}
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        try {
          await download(path);
        } catch (e) {
          notify(`The export failed: ${(e as Error).message}`);
        } finally {
          setBusy(false);
        }
      }}
    >
      {busy ? 'Exporting…' : 'Export CSV'}
    </button>
  );
}

export function Badge({ value, label }: { value: string | null | undefined; label?: string }) {
  const v = value ?? 'none';
  return <span class={`badge ${TONES[v] ?? 'gray'}`}>{label ?? v.replace(/_/g, ' ')}</span>;
}

/** An email's status (`delivery_delayed`) or an event of its log (`email.opened`), as the catalogue shows it. */
export function EmailBadge({ event }: { event: string }) {
  const name = event.replace(/^email\./, '');
  const b = EMAIL_BADGES[name];
  return b ? <span class={`badge ${b.tone}`}>{b.label}</span> : <Badge value={name} />;
}

/** A reply's bounce class (README.md, "Bounce classes and incidents"): the recipient's fault red, the sender's amber, the others gray. */
export function BounceClassBadge({ value }: { value: BounceClass }) {
  const tone = value === 'recipient' ? 'red' : SENDER_CLASSES.includes(value) ? 'amber' : 'gray';
  return (
    <span class={`badge ${tone}`}>
      <span class="sr-only">bounce class </span>
      {value.replace('_', ' ')}
    </span>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn small"
      aria-label={`${label}: ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          const area = document.createElement('textarea');
          area.value = text;
          document.body.append(area);
          area.select();
          document.execCommand('copy');
          area.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/**
 * Preformatted text; with `label`, a named region that takes the focus, so a keyboard can scroll it.
 * Without one it does so only while its text overflows (like a table), named "Code"; `copy` adds a
 * copy button for the whole text above it.
 */
export function Code({ children, wrap, label, copy }: { children: string; wrap?: boolean; label?: string; copy?: boolean }) {
  const ref = useRef<HTMLPreElement>(null);
  useScrollableFocus(label ? { current: null } : ref, 'Code');
  const pre = (
    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the label comes with the region role (both only when `label` is given).
    <pre ref={ref} class={`code ${wrap ? 'wrap' : ''}`} tabIndex={label ? 0 : undefined} role={label ? 'region' : undefined} aria-label={label}>
      {children}
    </pre>
  );
  if (!copy) return pre;
  return (
    <div class="code-block">
      <div class="code-tools">
        <CopyButton text={children} />
      </div>
      {pre}
    </div>
  );
}

export function Field({ label, hint, children, id }: { label: string; hint?: ComponentChildren; children: ComponentChildren; id: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

export function Dialog({
  open,
  title,
  onClose,
  children,
  wide,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} class={wide ? 'wide' : ''} aria-label={title} onClose={onClose} onCancel={onClose}>
      {open && (
        <div class="dialog-body">
          <div class="dialog-head">
            <h2>{title}</h2>
            <button type="button" class="btn ghost small" aria-label="Close" onClick={onClose}>
              ✕
            </button>
          </div>
          {children}
        </div>
      )}
    </dialog>
  );
}

/** A form whose submit runs `action` (no page load), with the action's error above its fields. */
export function Form({
  action,
  children,
  class: cls,
}: {
  action: { run: () => unknown; error: { message: string } | null };
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <form
      class={cls}
      onSubmit={(e) => {
        e.preventDefault();
        action.run();
      }}
    >
      <ErrorBox error={action.error} />
      {children}
    </form>
  );
}

/** A dialog holding one form: its fields, then Cancel and the submit button. */
export function FormDialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  action: { run: () => unknown; error: { message: string } | null; busy: boolean };
  submit: ComponentChildren;
  disabled?: boolean;
  wide?: boolean;
  children: ComponentChildren;
}) {
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onClose} wide={props.wide}>
      <Form action={props.action}>
        {props.children}
        <div class="form-actions">
          <button type="button" class="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={props.action.busy || props.disabled}>
            {props.submit}
          </button>
        </div>
      </Form>
    </Dialog>
  );
}

/** An action run by a form or a button: its busy state and the API's error. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiFailure | null>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
      return true;
    } catch (e) {
      setError(e instanceof ApiFailure ? e : new ApiFailure(0, 'error', String((e as Error)?.message ?? e)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

export function Tabs({
  tabs,
  current,
  onChange,
  label,
}: {
  tabs: { id: string; label: string }[];
  current: string;
  onChange: (id: string) => void;
  label: string;
}) {
  return (
    <div class="tabs" role="tablist" aria-label={label}>
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          aria-selected={t.id === current}
          tabIndex={t.id === current ? 0 : -1}
          class={t.id === current ? 'tab active' : 'tab'}
          onClick={() => onChange(t.id)}
          onKeyDown={(e) => {
            const i = tabs.findIndex((x) => x.id === current);
            const next = e.key === 'ArrowRight' ? tabs[(i + 1) % tabs.length] : e.key === 'ArrowLeft' ? tabs[(i - 1 + tabs.length) % tabs.length] : null;
            if (next) {
              onChange(next.id);
              document.getElementById(`tab-${next.id}`)?.focus();
            }
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function KeyValue({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => (
        <div>
          <dt>{k}</dt>
          <dd>{v ?? <span class="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

export type InputEvent = Event & { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement };
export const val = (e: InputEvent) => e.currentTarget.value;

/** Notices at the bottom of the screen, read out by screen readers. */
let pushNotice: (text: string) => void = () => {};
export function notify(text: string): void {
  pushNotice(text);
}
export function Notices() {
  const [items, setItems] = useState<{ id: number; text: string }[]>([]);
  pushNotice = (text) => {
    const id = Date.now() + Math.random();
    setItems((xs) => [...xs, { id, text }]);
    setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== id)), 4000);
  };
  return (
    <div class="notices" role="status" aria-live="polite">
      {items.map((i) => (
        <div class="notice" key={i.id}>
          {i.text}
        </div>
      ))}
    </div>
  );
}

/** A contact by email, linked to its page; one deleted since, as such (automation runs name theirs this way). */
export function ContactName({ id }: { id: string }) {
  const c = useGet(url('/contacts/:id_or_email', { id_or_email: id }));
  if (c.error) return <span class="muted small">deleted contact</span>;
  if (!c.data) return <span class="muted">…</span>;
  return <a href={page`/dashboard/audiences/contacts/${id}`}>{c.data.email}</a>;
}

// ---------------------------------------------------------------------------------------------
// Confirmations: an accessible modal (the Dialog above) in place of the browser's confirm()
// ---------------------------------------------------------------------------------------------

interface Asked {
  message: string;
  confirm: string;
  danger: boolean;
  resolve: (ok: boolean) => void;
}
let pushAsk: (a: Asked) => void = (a) => a.resolve(false);

/** Ask `message` in a modal; true when its confirm button (labelled `confirm`) is pressed. */
export function ask(message: string, opts: { confirm?: string; danger?: boolean } = {}): Promise<boolean> {
  return new Promise((resolve) => pushAsk({ message, confirm: opts.confirm ?? 'Confirm', danger: opts.danger ?? true, resolve }));
}

/** The host of ask()'s dialogs, one at a time (rendered once, by the shell). */
export function Confirmations() {
  const [asked, setAsked] = useState<Asked | null>(null);
  pushAsk = (a) => {
    setAsked((cur) => {
      cur?.resolve(false);
      return a;
    });
  };
  const answer = (ok: boolean) => {
    asked?.resolve(ok);
    setAsked(null);
  };
  return (
    <Dialog open={!!asked} title="Are you sure?" onClose={() => answer(false)}>
      {asked && (
        <>
          <p class="ask-message">{asked.message}</p>
          <div class="form-actions">
            <button type="button" class="btn" onClick={() => answer(false)}>
              Cancel
            </button>
            <button type="button" class={asked.danger ? 'btn danger solid' : 'btn primary'} onClick={() => answer(true)}>
              {asked.confirm}
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}

/**
 * While `dirty`, leaving the page asks first: closing or reloading the tab (the browser's own
 * prompt, `beforeunload`) and navigating inside the dashboard (an ask() dialog, router.ts's guard).
 */
export function useLeaveWarning(dirty: boolean, message = 'You have unsaved changes. Leave this page and lose them?'): void {
  useEffect(() => {
    if (!dirty) return;
    const onUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    const guard = () => ask(message, { confirm: 'Leave without saving' });
    window.addEventListener('beforeunload', onUnload);
    setLeaveGuard(guard);
    return () => {
      window.removeEventListener('beforeunload', onUnload);
      setLeaveGuard(null);
    };
  }, [dirty, message]);
}

/** A new password typed twice (a password reset, an invitation's acceptance): the caller compares them. */
export function NewPasswordFields(p: { label?: string; password: string; setPassword: (v: string) => void; again: string; setAgain: (v: string) => void }) {
  return (
    <>
      <Field id="new-password" label={p.label ?? 'New password'} hint="At least 10 characters.">
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          minLength={10}
          required
          value={p.password}
          onInput={(e) => p.setPassword(val(e))}
          aria-describedby="new-password-hint"
        />
      </Field>
      <Field id="repeat-password" label="Repeat the password">
        <input id="repeat-password" type="password" autoComplete="new-password" required value={p.again} onInput={(e) => p.setAgain(val(e))} />
      </Field>
    </>
  );
}
