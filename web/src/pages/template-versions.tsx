// A template's version history (docs/api.md §20.5): the versions it was published with, latest
// first; one of them beside the template's latest version — subject and from, the HTML's changed
// lines side by side, both previews, the text — and Restore, which publishes a copy of it at once.
import { useMemo, useState } from 'preact/hooks';
import type { Template, TemplateVersion, TemplateVersionSummary } from '../../../src/schemas/templates';
import { post, url } from '../api';
import { lineDiff } from '../line-diff';
import { navigate, useLocation } from '../router';
import { renderPreview, type Values } from '../template-text';
import { Card, Dialog, Empty, ErrorBox, Loading, notify, PageHeader, Tabs, Time, useAction, useGet } from '../ui';
import { EmailPreview } from './preview';

/** The versions listed at most (the latest ones). */
const LISTED = 100;

export function TemplateVersionsPage({ id }: { id: string }) {
  const { query } = useLocation();
  const t = useGet(url('/templates/:id_or_alias', { id_or_alias: id }));
  const versions = useGet(url('/templates/:id_or_alias/versions', { id_or_alias: id, limit: LISTED }));
  const error = t.error ?? versions.error;
  if (error) return <ErrorBox error={error} />;
  if (!t.data || !versions.data) return <Loading />;
  const list = versions.data.data;
  // Shown first: the latest version that differs from what the template holds now, else the latest.
  const asked = Number(query.get('version'));
  const chosen = list.find((v) => v.version === asked) ?? list.find((v) => v.id !== t.data?.current_version_id) ?? list[0];
  const reload = () => {
    t.reload();
    versions.reload();
  };
  return (
    <>
      <PageHeader
        back={{ href: `/dashboard/templates/${t.data.id}`, label: t.data.name }}
        title="Version history"
        description={
          <>
            Every version <strong>{t.data.name}</strong> was published with. Restore one to send it again.
          </>
        }
      />
      {!list.length ? (
        <Empty title="Not published yet.">The history starts with the first publish: each one keeps the version sends use from then on.</Empty>
      ) : (
        <div class="versions-layout">
          <nav class="card version-list" aria-label="Published versions">
            <h2 class="card-title">Published versions</h2>
            <ol>
              {list.map((v) => (
                <VersionLink key={v.id} t={t.data!} v={v} selected={v.id === chosen?.id} />
              ))}
            </ol>
            {versions.data.has_more && <p class="hint">The {LISTED} latest versions are listed.</p>}
          </nav>
          {chosen && <Compare key={chosen.id} t={t.data} summary={chosen} onRestored={reload} />}
        </div>
      )}
    </>
  );
}

function VersionLink({ t, v, selected }: { t: Template; v: TemplateVersionSummary; selected: boolean }) {
  return (
    <li>
      <a
        href={`/dashboard/templates/${t.id}/versions?version=${v.version}`}
        class={selected ? 'version-link selected' : 'version-link'}
        aria-current={selected ? 'true' : undefined}
      >
        <span class="version-name">
          <strong>Version {v.version}</strong>
          {v.current && <span class="badge green as-written">Sends use it</span>}
        </span>
        <span class="small muted">
          Published <Time iso={v.published_at} />
          {v.reverted_from !== null && <> · restored from version {v.reverted_from}</>}
        </span>
        {v.subject && <span class="small version-subject">{v.subject}</span>}
      </a>
    </li>
  );
}

/** The variables' fallbacks, as the editor's preview fills them in. */
const fallbacks = (vars: { key: string; fallback_value: string | number | null }[]): Values => {
  const out: Values = Object.create(null);
  for (const v of vars) if (v.fallback_value !== null) out[v.key] = v.fallback_value;
  return out;
};

/** One version beside the template's latest version. */
function Compare({ t, summary, onRestored }: { t: Template; summary: TemplateVersionSummary; onRestored: () => void }) {
  const got = useGet(url('/templates/:id_or_alias/versions/:version', { id_or_alias: t.id, version: String(summary.version) }));
  const [tab, setTab] = useState<'html' | 'preview' | 'text'>('html');
  const [confirming, setConfirming] = useState(false);
  const restore = useAction(async () => {
    const now = await post(url('/templates/:id_or_alias/versions/:version/revert', { id_or_alias: t.id, version: String(summary.version) }));
    setConfirming(false);
    notify(
      now.version === summary.version
        ? `Version ${summary.version} kept: the unpublished changes are gone.`
        : `Version ${summary.version} restored as version ${now.version}: sends use it now.`,
    );
    onRestored();
    navigate(`/dashboard/templates/${t.id}/versions?version=${now.version}`, { replace: true });
  });
  if (got.error) return <ErrorBox error={got.error} />;
  const v = got.data;
  if (!v) return <Loading />;
  const latest = t.has_unpublished_versions ? 'Latest (unpublished)' : 'Latest';
  const left = `Version ${v.version}`;
  const same = v.id === t.current_version_id;
  return (
    <section class="version-compare" aria-label={`Version ${v.version} beside the latest version`}>
      <Card>
        <div class="row-between compare-title">
          <h2 class="card-title">
            Version {v.version} beside the latest version
            {same && <span class="muted small"> (the same)</span>}
          </h2>
          <button type="button" class="btn primary" disabled={same && !t.has_unpublished_versions} onClick={() => setConfirming(true)}>
            Restore version {v.version}
          </button>
        </div>
        <ErrorBox error={restore.error} />
        <table class="compare-fields">
          <caption class="sr-only">Subject and sender of version {v.version} and of the latest version</caption>
          <colgroup>
            <col class="name-col" />
            <col />
            <col />
          </colgroup>
          <thead>
            <tr>
              <td />
              <th scope="col">{left}</th>
              <th scope="col">{latest}</th>
            </tr>
          </thead>
          <tbody>
            <FieldRow name="Subject" before={v.subject} after={t.subject} />
            <FieldRow name="From" before={v.from} after={t.from} />
            <FieldRow name="Reply-to" before={v.reply_to?.join(', ') ?? null} after={t.reply_to?.join(', ') ?? null} />
            <FieldRow name="Variables" before={v.variables.map((x) => x.key).join(', ') || null} after={t.variables.map((x) => x.key).join(', ') || null} />
          </tbody>
        </table>
        <Tabs
          label="Compare"
          current={tab}
          onChange={(x) => setTab(x as typeof tab)}
          tabs={[
            { id: 'html', label: 'HTML changes' },
            { id: 'preview', label: 'Preview' },
            { id: 'text', label: 'Plain text' },
          ]}
        />
        <div role="tabpanel" aria-labelledby={`tab-${tab}`} class="tab-panel">
          {tab === 'html' && <DiffTable before={v.html} after={t.html} left={left} right={latest} what="HTML" />}
          {tab === 'text' && <DiffTable before={v.text ?? ''} after={t.text ?? ''} left={left} right={latest} what="Plain text" />}
          {tab === 'preview' && <Previews v={v} t={t} left={left} right={latest} />}
        </div>
        <p class="hint">
          Published <Time iso={v.published_at} exact />
          {v.reverted_from !== null && <> (a copy of version {v.reverted_from})</>}. Id <span class="mono">{v.id}</span>.
        </p>
      </Card>
      <Dialog open={confirming} title={`Restore version ${v.version}`} onClose={() => setConfirming(false)}>
        <ErrorBox error={restore.error} />
        <p>
          {same
            ? `The unpublished changes are dropped: the template goes back to version ${v.version}, which sends use now.`
            : `A copy of version ${v.version} becomes the template's latest version and is published at once: sends use it from now on.`}
          {t.has_unpublished_versions && !same && ' The unpublished changes are replaced.'}
        </p>
        <div class="form-actions">
          <button type="button" class="btn" onClick={() => setConfirming(false)}>
            Cancel
          </button>
          <button type="button" class="btn primary" disabled={restore.busy} onClick={() => restore.run()}>
            Restore and publish
          </button>
        </div>
      </Dialog>
    </section>
  );
}

function FieldRow({ name, before, after }: { name: string; before: string | null; after: string | null }) {
  const changed = (before ?? '') !== (after ?? '');
  const cell = (x: string | null, cls: string) => (
    <td class={changed ? cls : ''}>{x ? <span class="break-words">{x}</span> : <span class="muted">none</span>}</td>
  );
  return (
    <tr>
      <th scope="row">
        {name}
        {changed && <span class="sr-only"> (changed)</span>}
      </th>
      {cell(before, 'del')}
      {cell(after, 'ins')}
    </tr>
  );
}

/** The lines of two texts side by side, what changed marked (removed on the left, added on the right). */
function DiffTable({ before, after, left, right, what }: { before: string; after: string; left: string; right: string; what: string }) {
  const d = useMemo(() => lineDiff(before, after), [before, after]);
  const side = (s: (typeof d.rows)[number]['left'], mark: 'del' | 'ins') =>
    s ? (
      <>
        <td class="ln mono">{s.n}</td>
        <td class={s.changed ? `line mono ${mark}` : 'line mono'}>
          {s.changed && <span class="sr-only">{mark === 'del' ? 'removed: ' : 'added: '}</span>}
          {s.text}
        </td>
      </>
    ) : (
      <>
        <td class="ln" />
        <td class="line mono none" />
      </>
    );
  return (
    <>
      <p class="small muted">
        {before === after
          ? `${what}: the same in both.`
          : d.compared
            ? `${what}: ${d.changes} ${d.changes === 1 ? 'place differs' : 'places differ'}.`
            : `${what}: too long to compare line by line; both shown whole.`}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region a keyboard must be able to scroll. */}
      <section class="diff-wrap" tabIndex={0} aria-label={`${what}: ${left} beside ${right}`}>
        <table class="diff">
          <caption class="sr-only">
            {what}: {left} beside {right}
          </caption>
          <colgroup>
            <col class="ln-col" />
            <col />
            <col class="ln-col" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col" colSpan={2}>
                {left}
              </th>
              <th scope="col" colSpan={2}>
                {right}
              </th>
            </tr>
          </thead>
          <tbody>
            {d.rows.map((r, i) => (
              <tr key={i}>
                {side(r.left, 'del')}
                {side(r.right, 'ins')}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}

function Previews({ v, t, left, right }: { v: TemplateVersion; t: Template; left: string; right: string }) {
  const shown = (html: string, vars: Template['variables'], title: string) => {
    const r = renderPreview(html, fallbacks(vars), 'html');
    return r.ok ? <EmailPreview html={r.out} height={480} title={`Email preview: ${title}`} /> : <p class="error-box">Not a valid template: {r.error}</p>;
  };
  return (
    <div class="compare-previews">
      <div>
        <h3 class="small">{left}</h3>
        {shown(v.html, v.variables, left)}
      </div>
      <div>
        <h3 class="small">{right}</h3>
        {shown(t.html, t.variables, right)}
      </div>
    </div>
  );
}
