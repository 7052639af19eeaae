// The version history of templates (docs/api.md §20.5, a Posthorn extension): every version
// published is kept, numbered 1, 2, 3… in the order of publishing, to be listed, read beside the
// current one and restored. Restoring (`revert`) makes a copy of the old content the latest
// version and publishes it at once — a roll back of what sends use — kept in the history as the
// next number, naming the version it came from; unpublished changes (the draft) are replaced.
// Templates published before the history existed have none stored: their published version is
// shown as version 1 until they are published again, which stores it first.
import type { StoreReader, TemplateRec, TemplateVersion, TemplateVersionRec, Tx, PageQuery, Page } from '../store';
import { errors } from '../errors';
import { isUuid, newId } from '../ids';

/** A template's version 1 when it was published before the history existed (not stored). */
function unstoredFirst(t: TemplateRec): TemplateVersionRec | null {
  if (t.versions || !t.published) return null;
  const v = t.published;
  return { id: v.id, team_id: t.team_id, created_at: t.published_at ?? v.created_at, template_id: t.id, number: 1, reverted_from: null, content: v };
}

/**
 * In the unit of work of a publish: keep `published` in `t`'s history unless it is the latest
 * there already; the number of versions the history then holds (`TemplateRec.versions`).
 */
export async function keepPublished(tx: Tx, t: TemplateRec, published: TemplateVersion, at: string, revertedFrom: number | null = null): Promise<number> {
  let n = t.versions ?? 0;
  const first = unstoredFirst(t);
  if (first) {
    tx.templateVersions.put(first);
    n = 1;
  }
  if (t.published?.id === published.id && n > 0) return n;
  n += 1;
  tx.templateVersions.put({
    id: published.id,
    team_id: t.team_id,
    created_at: at,
    template_id: t.id,
    number: n,
    reverted_from: revertedFrom,
    content: published,
  });
  return n;
}

/** In the unit of work of a delete: the template's history goes with it. */
export async function removeHistory(tx: Tx, t: TemplateRec): Promise<void> {
  for (const v of await tx.templateVersions.findAll('template', t.id, t.team_id)) tx.templateVersions.remove(t.team_id, v.id);
}

/** A page of `t`'s history, the latest version first (docs/api.md §4: `after` and `before` are version ids). */
export async function historyPage<R>(r: StoreReader, t: TemplateRec, q: PageQuery, map: (v: TemplateVersionRec) => R): Promise<Page<R>> {
  const first = unstoredFirst(t);
  if (first) return { has_more: false, data: q.after === first.id || q.before === first.id ? [] : [map(first)] };
  return r.templateVersions.pageBy('template', t.id, t.team_id, q, 20, map);
}

/** The version `ref` names in `t`'s history — its number (1, 2…) or its id — or the documented 404. */
export async function findVersion(r: StoreReader, t: TemplateRec, ref: string): Promise<TemplateVersionRec> {
  const first = unstoredFirst(t);
  const found = first
    ? ref === '1' || ref.toLowerCase() === first.id
      ? first
      : undefined
    : /^[1-9][0-9]{0,8}$/.test(ref)
      ? await r.templateVersions.find('number', `${t.id}:${Number(ref)}`, t.team_id)
      : isUuid(ref)
        ? await r.templateVersions.get(t.team_id, ref.toLowerCase())
        : undefined;
  if (!found || found.template_id !== t.id) throw errors.notFound('Template version');
  return found;
}

/**
 * In a unit of work: restore version `v` of `cur` (docs/api.md §20.5). The version published now
 * again only drops the draft; an older one is copied as a new version, published at `at`.
 */
export async function revertTo(tx: Tx, cur: TemplateRec, v: TemplateVersionRec, at: string): Promise<{ template: TemplateRec; version: TemplateVersionRec }> {
  if (cur.published?.id === v.id) {
    const template: TemplateRec = { ...cur, current: cur.published, updated_at: at };
    tx.templates.put(template);
    return { template, version: v };
  }
  const copy: TemplateVersion = { ...v.content, id: newId(), created_at: at };
  const versions = await keepPublished(tx, cur, copy, at, v.number);
  const template: TemplateRec = { ...cur, current: copy, published: copy, published_at: at, updated_at: at, versions };
  tx.templates.put(template);
  return { template, version: (await tx.templateVersions.get(cur.team_id, copy.id))! };
}
