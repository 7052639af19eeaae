// Email templates (docs/api.md §20): create, update, publish, duplicate and delete, found by id or
// alias; and, for a send, the published version rendered with the request's variables. A template
// keeps its latest version (the draft GET shows and PATCH edits) and the published one sends use;
// a change of content makes a new version, so a published template keeps sending what was
// published until it is published again (`has_unpublished_versions`). Every version published is
// kept in its history (versions.ts), which a delete takes with it.
import type { Store, StoreReader, TemplateRec, TemplateVariable, TemplateVersion, Tx } from '../store';
import { errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';
import { renderTemplate, variablesUsed, type VariableValues } from './render';
import { checkValue, type TemplateFields, type VariableDef } from './validate';
import { keepPublished, removeHistory } from './versions';

export { templateFields, sendTemplate, bodyWithTemplate } from './validate';

/** A template by id (a UUID) or alias, in `team`. */
export function findTemplate(r: StoreReader, team: string, ref: string): Promise<TemplateRec | undefined> {
  return isUuid(ref) ? r.templates.get(team, ref.toLowerCase()) : r.templates.find('alias', ref, team);
}

/** One unit of work on the template `ref` names (404 when none). */
export function onTemplate<T>(store: Store, team: string, ref: string, fn: (tx: Tx, cur: TemplateRec, at: string) => T | Promise<T>): Promise<T> {
  return store.write(async (tx) => {
    const cur = await findTemplate(tx, team, ref);
    if (!cur) throw errors.notFound('Template');
    return fn(tx, cur, nowIso());
  });
}

const aliasTaken = (alias: string) => errors.invalidField('alias', `\`${alias}\` is already the alias of another template.`);

/** The variables of a new version: those kept from `prev` keep their id and creation time. */
function variableRecs(defs: VariableDef[], prev: TemplateVariable[], at: string): TemplateVariable[] {
  return defs.map((d) => {
    const old = prev.find((v) => v.key === d.key);
    if (old && old.type === d.type && old.fallback_value === d.fallback_value) return old;
    return { id: old?.id ?? newId(), key: d.key, type: d.type, fallback_value: d.fallback_value, created_at: old?.created_at ?? at, updated_at: at };
  });
}

const CONTENT = ['subject', 'html', 'text', 'from', 'reply_to', 'variables'] as const;

/** `base` with the content fields `f` gives; a new version only when the content changes. */
function nextVersion(base: TemplateVersion | null, f: TemplateFields, at: string): TemplateVersion {
  const content = {
    subject: f.subject !== undefined ? f.subject : (base?.subject ?? null),
    html: f.html ?? base?.html ?? '',
    text: f.text !== undefined ? f.text : (base?.text ?? null),
    from: f.from !== undefined ? f.from : (base?.from ?? null),
    reply_to: f.reply_to !== undefined ? f.reply_to : (base?.reply_to ?? null),
    variables: f.variables !== undefined ? variableRecs(f.variables, base?.variables ?? [], at) : (base?.variables ?? []),
  };
  if (base && CONTENT.every((k) => JSON.stringify(content[k]) === JSON.stringify(base[k]))) return base;
  return { id: newId(), created_at: at, ...content };
}

export async function createTemplate(store: Store, team: string, f: TemplateFields): Promise<TemplateRec> {
  const at = nowIso();
  const t: TemplateRec = {
    id: newId(),
    team_id: team,
    created_at: at,
    updated_at: at,
    name: f.name!,
    alias: f.alias ?? null,
    current: nextVersion(null, f, at),
    published: null,
    published_at: null,
  };
  return store.write(async (tx) => {
    // Checked inside the unit of work: of two creates with one alias, one wins.
    if (t.alias && (await tx.templates.find('alias', t.alias, team))) throw aliasTaken(t.alias);
    tx.templates.put(t);
    return t;
  });
}

export function updateTemplate(store: Store, team: string, ref: string, f: TemplateFields): Promise<TemplateRec> {
  return onTemplate(store, team, ref, async (tx, cur, at) => {
    if (f.alias) {
      const holder = await tx.templates.find('alias', f.alias, team);
      if (holder && holder.id !== cur.id) throw aliasTaken(f.alias);
    }
    const next: TemplateRec = {
      ...cur,
      name: f.name ?? cur.name,
      alias: f.alias !== undefined ? f.alias : cur.alias,
      current: nextVersion(cur.current, f, at),
      updated_at: at,
    };
    tx.templates.put(next);
    return next;
  });
}

/** Make the latest version the one sends use, kept in the template's history (a version published again is not kept twice). */
export function publishTemplate(store: Store, team: string, ref: string): Promise<TemplateRec> {
  return onTemplate(store, team, ref, async (tx, cur, at) => {
    const next: TemplateRec = { ...cur, published: cur.current, published_at: at, updated_at: at, versions: await keepPublished(tx, cur, cur.current, at) };
    tx.templates.put(next);
    return next;
  });
}

/** A new draft with the latest content of `ref`, named "<name> (copy)", without an alias (aliases are unique). */
export function duplicateTemplate(store: Store, team: string, ref: string): Promise<TemplateRec> {
  return onTemplate(store, team, ref, (tx, cur, at) => {
    const copy: TemplateRec = {
      id: newId(),
      team_id: team,
      created_at: at,
      updated_at: at,
      name: `${cur.name} (copy)`,
      alias: null,
      current: { ...cur.current, id: newId(), created_at: at },
      published: null,
      published_at: null,
    };
    tx.templates.put(copy);
    return copy;
  });
}

/** Delete, with its history; resolves to the deleted template's id. */
export function removeTemplate(store: Store, team: string, ref: string): Promise<string> {
  return onTemplate(store, team, ref, async (tx, cur) => {
    tx.templates.remove(team, cur.id);
    await removeHistory(tx, cur);
    return cur.id;
  });
}

/**
 * The variables a send of this version must give a value for, or have a fallback for: every one
 * declared without a fallback, and every one its subject, html or text writes outside a section.
 */
export function neededVariables(v: TemplateVersion): Set<string> {
  const needed = new Set(v.variables.filter((d) => d.fallback_value === null).map((d) => d.key));
  for (const [field, source] of [
    ['subject', v.subject],
    ['html', v.html],
    ['text', v.text],
  ] as const)
    if (source) for (const name of variablesUsed(field, source)) needed.add(name);
  return needed;
}

export interface RenderedTemplate {
  template_id: string;
  subject: string | null;
  html: string;
  text: string | null;
  from: string | null;
  reply_to: string[] | null;
}

/**
 * What a send with `template` uses (docs/api.md §20.4): the published version of `ref`, its
 * subject, html and text rendered with `given` values, falling back to the declared fallbacks.
 * Every variable the template writes, and every one declared without a fallback, needs a value.
 */
export async function renderForSend(r: StoreReader, team: string, ref: string, given: VariableValues): Promise<RenderedTemplate> {
  const t = await findTemplate(r, team, ref);
  if (!t) throw errors.invalidField('template.id', `no template has the id or alias \`${ref}\`.`);
  const v = t.published;
  if (!v) throw errors.validation(`The template \`${ref}\` is not published. Publish it before sending emails with it.`);
  const values: VariableValues = {};
  for (const d of v.variables) {
    if (Object.hasOwn(given, d.key)) values[d.key] = checkValue(given[d.key], d.type, `template.variables.${d.key}`);
    else if (d.fallback_value !== null) values[d.key] = d.fallback_value;
  }
  for (const [key, value] of Object.entries(given)) if (!Object.hasOwn(values, key)) values[key] = value;
  for (const name of neededVariables(v))
    if (!Object.hasOwn(values, name))
      throw errors.validation(`Missing \`template.variables.${name}\` field: the template uses the \`${name}\` variable and has no fallback value for it.`);
  return {
    template_id: t.id,
    subject: v.subject === null ? null : renderTemplate(v.subject, values, 'subject'),
    html: renderTemplate(v.html, values, 'html'),
    text: v.text === null ? null : renderTemplate(v.text, values, 'text'),
    from: v.from,
    reply_to: v.reply_to,
  };
}
