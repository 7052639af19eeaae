// Checks of template requests (docs/api.md §20) that need meaning, once the wire schema has checked
// the types of the fields (src/schemas/templates.ts): the variables a template declares, and the
// values a send gives them — Resend's limits: at most 50 variables, keys of ASCII letters, digits
// and `_` up to 50 characters, reserved names refused, string values up to 2,000 characters,
// numbers up to 2^53 − 1. The first failure is thrown as an ApiError naming its field; nothing
// here touches the store.
import { type ApiError, errors } from '../errors';
import { isUuid } from '../ids';
import { parseAddress } from '../mail/address';
import { isObject } from '../schemas/common';
import { VARIABLE_KEY } from '../schemas/templates';
import type { CreateTemplateRequest, UpdateTemplateRequest } from '../schemas/templates';
import { parseTemplate } from './render';
import type { TemplateVariableType } from '../store';

export const MAX_VARIABLES = 50;
export const MAX_STRING_VALUE = 2000;
const KEY = new RegExp(VARIABLE_KEY);
/** Names Resend keeps for contact fields and its own links (both spellings of the unsubscribe URL). */
const RESERVED = new Set(['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'RESEND_UNSUBSCRIBE_URL', 'contact', 'this']);
/** Posthorn: an alias is a path segment, so URL-safe, and never a UUID (that would be an id). */
const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface VariableDef {
  key: string;
  type: TemplateVariableType;
  fallback_value: string | number | null;
}

/** A create or update request, checked; a key left out was not given (`null` clears). */
export interface TemplateFields {
  name?: string;
  html?: string;
  alias?: string | null;
  from?: string | null;
  subject?: string | null;
  reply_to?: string[] | null;
  text?: string | null;
  variables?: VariableDef[];
}

/** Left out or null: a required field or key is missing. */
const absent = (v: unknown): v is null | undefined => v === undefined || v === null;

/** Check the body of POST /templates (`create`) or PATCH /templates/{id_or_alias}. */
export function templateFields(body: CreateTemplateRequest | UpdateTemplateRequest, mode: 'create' | 'update'): TemplateFields {
  if (mode === 'create') {
    if (absent(body.name)) throw errors.missingField('name');
    if (absent(body.html)) throw errors.missingField('html');
  }
  const out: TemplateFields = {};
  // An update's `name` and `html` are never null (the schema refuses it).
  if (!absent(body.name)) out.name = nonEmpty(body.name, 'name');
  if (!absent(body.html)) out.html = template(nonEmpty(body.html, 'html'), 'html');
  if (body.alias !== undefined) out.alias = body.alias === null ? null : alias(body.alias);
  if (body.from !== undefined) out.from = body.from === null ? null : address(body.from, 'from');
  if (body.subject !== undefined) out.subject = body.subject === null ? null : template(body.subject, 'subject');
  if (body.reply_to !== undefined) out.reply_to = replyTo(body.reply_to);
  if (body.text !== undefined) out.text = body.text === null ? null : template(body.text, 'text');
  if (body.variables !== undefined) out.variables = variables(body.variables);
  return out;
}

function nonEmpty(v: string, field: string): string {
  if (v.trim() === '') throw errors.invalidField(field, 'must not be empty.');
  return v;
}

/** Template text: Mustache without partials. */
function template(s: string, field: string): string {
  parseTemplate(field, s);
  return s;
}

function alias(s: string): string {
  if (!ALIAS.test(s) || isUuid(s))
    throw errors.invalidField('alias', 'must be 1 to 100 ASCII letters, digits, `.`, `_` or `-`, starting with a letter or digit, and not a UUID.');
  return s;
}

function address(s: string, field: string): string {
  if (!parseAddress(s)) throw errors.invalidAddress(field);
  return s.trim();
}

/** `reply_to`: a string or an array of strings, kept as an array; empty or null clears it. */
function replyTo(v: string | string[] | null): string[] | null {
  if (v === null || v === '') return null;
  const list = typeof v === 'string' ? [v] : v;
  return list.length ? list.map((x) => address(x, 'reply_to')) : null;
}

type VariableInput = NonNullable<CreateTemplateRequest['variables']>[number];

function variables(v: VariableInput[] | null): VariableDef[] {
  if (v === null) return [];
  if (v.length > MAX_VARIABLES) throw errors.invalidField('variables', `a template may declare at most ${MAX_VARIABLES} variables.`);
  const keys = new Set<string>();
  return v.map((item, i): VariableDef => {
    const field = `variables[${i}]`;
    if (absent(item.key)) throw errors.missingField(`${field}.key`);
    const key = variableKey(item.key, `${field}.key`);
    if (keys.has(key)) throw errors.invalidField(`${field}.key`, `\`${key}\` is declared twice.`);
    keys.add(key);
    if (absent(item.type)) throw errors.missingField(`${field}.type`);
    const fallback = item.fallback_value ?? null;
    if (fallback !== null) checkValue(fallback, item.type, `${field}.fallback_value`);
    return { key, type: item.type, fallback_value: fallback as string | number | null };
  });
}

/**
 * A variable key: ASCII letters, digits and `_`, at most 50 characters (VARIABLE_KEY, which the
 * schema checks of a template's own keys, in the same words), not a reserved name.
 */
export function variableKey(v: unknown, field: string): string {
  if (typeof v !== 'string' || !KEY.test(v)) throw errors.invalidField(field, 'must be 1 to 50 ASCII letters, digits or underscores.');
  if (RESERVED.has(v)) throw errors.invalidField(field, `\`${v}\` is a reserved name (${[...RESERVED].join(', ')}).`);
  return v;
}

/**
 * A variable's value (or fallback): a string of at most 2,000 characters or a number not beyond
 * 2^53 − 1 either way; `type` given, it must match (a number may fill a string variable).
 */
export function checkValue(v: unknown, type: TemplateVariableType | null, field: string): string | number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER) throw errors.invalidField(field, 'a number must not be greater than 2^53 − 1.');
    return v;
  }
  if (typeof v === 'string') {
    if (type === 'number') throw errors.invalidField(field, 'must be a number: the variable is of type `number`.');
    if (v.length > MAX_STRING_VALUE) throw errors.invalidField(field, `a string must be at most ${MAX_STRING_VALUE} characters.`);
    return v;
  }
  throw errors.invalidField(field, `must be ${type === 'number' ? 'a number' : 'a string or a number'}.`);
}

/** `template` of a send (docs/api.md §20.4): `{ id, variables }`, checked. */
export function sendTemplate(v: unknown): { ref: string; variables: Record<string, string | number> } {
  if (!isObject(v)) throw errors.invalidField('template', 'must be an object with `id` and `variables`.');
  if (v.id === undefined || v.id === null || v.id === '') throw errors.missingField('template.id');
  if (typeof v.id !== 'string') throw errors.invalidField('template.id', 'must be a string: the id or alias of a published template.');
  const values: Record<string, string | number> = {};
  if (v.variables !== undefined && v.variables !== null) {
    if (!isObject(v.variables)) throw errors.invalidField('template.variables', 'must be an object of variable names and values.');
    for (const [key, value] of Object.entries(v.variables)) {
      const field = `template.variables.${key}`;
      variableKey(key, field);
      values[key] = checkValue(value, null, field);
    }
  }
  return { ref: v.id, variables: values };
}

/** 422 for a send whose body fields a template provides itself. */
export function bodyWithTemplate(field: string): ApiError {
  return errors.validation(`The \`${field}\` field cannot be used together with \`template\`: the template provides the body.`);
}
