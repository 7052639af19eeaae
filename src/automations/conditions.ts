// Condition rules (docs/api.md §24.4): the config of a `condition` step and the `filter_rule` of a
// `wait_for_event` step, exactly as Resend's SDK sends them — `{type: "rule", field, operator,
// value}`, or `{type: "and" | "or", rules: […]}`. Checked when the automation is created; evaluated
// when a run reaches the step.
import { errors } from '../errors';
import { isObject } from '../schemas/common';
import { lookup, pathField, type PathScope, type RunContext } from './context';

export type ConditionRule =
  | { type: 'rule'; field: string; operator: Operator; value?: string | number | boolean | null }
  | { type: 'and' | 'or'; rules: ConditionRule[] };

type Operator = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'starts_with' | 'ends_with' | 'exists' | 'is_empty';

/** What each operator compares with: the type its `value` must have. */
const OPERATORS: Record<Operator, 'scalar' | 'number' | 'string' | 'none'> = {
  eq: 'scalar',
  neq: 'scalar',
  gt: 'number',
  gte: 'number',
  lt: 'number',
  lte: 'number',
  contains: 'string',
  starts_with: 'string',
  ends_with: 'string',
  exists: 'none',
  is_empty: 'none',
};

/** Posthorn: rules nest at most this deep, and a group holds at most this many. */
const MAX_DEPTH = 5;
const MAX_RULES = 20;

/** A rule, checked (the 422 names the offending `field`); what is kept is only what it uses. */
export function conditionRule(v: unknown, field: string, scope: PathScope, depth = 1): ConditionRule {
  if (!isObject(v))
    throw errors.invalidField(field, 'must be a condition: `{ "type": "rule", "field", "operator", "value" }` or `{ "type": "and" | "or", "rules": [...] }`.');
  if (v.type === undefined) throw errors.missingField(`${field}.type`);
  if (v.type === 'and' || v.type === 'or') {
    if (depth >= MAX_DEPTH) throw errors.invalidField(field, `conditions nest at most ${MAX_DEPTH} levels deep.`);
    if (v.rules === undefined) throw errors.missingField(`${field}.rules`);
    if (!Array.isArray(v.rules) || v.rules.length === 0 || v.rules.length > MAX_RULES)
      throw errors.invalidField(`${field}.rules`, `must be an array of 1 to ${MAX_RULES} conditions.`);
    return { type: v.type, rules: v.rules.map((r, i) => conditionRule(r, `${field}.rules[${i}]`, scope, depth + 1)) };
  }
  if (v.type !== 'rule') throw errors.invalidField(`${field}.type`, 'must be `rule`, `and` or `or`.');
  if (v.field === undefined) throw errors.missingField(`${field}.field`);
  const path = pathField(v.field, `${field}.field`, scope);
  if (v.operator === undefined) throw errors.missingField(`${field}.operator`);
  if (typeof v.operator !== 'string' || !Object.hasOwn(OPERATORS, v.operator))
    throw errors.invalidField(`${field}.operator`, `must be one of ${Object.keys(OPERATORS).join(', ')}.`);
  const operator = v.operator as Operator;
  const kind = OPERATORS[operator];
  if (kind === 'none') return { type: 'rule', field: path, operator };
  if (v.value === undefined) throw errors.missingField(`${field}.value`);
  const value = v.value;
  const ok =
    kind === 'scalar'
      ? value === null || ['string', 'number', 'boolean'].includes(typeof value)
      : kind === 'number'
        ? typeof value === 'number' && Number.isFinite(value)
        : typeof value === 'string';
  if (!ok)
    throw errors.invalidField(`${field}.value`, `must be ${kind === 'scalar' ? 'a string, a number, a boolean or null' : `a ${kind}`} for \`${operator}\`.`);
  return { type: 'rule', field: path, operator, value: value as string | number | boolean | null };
}

/** Does the rule hold in `ctx`? A field that is not there is undefined: it equals only null, and exists not. */
export function evaluate(rule: ConditionRule, ctx: RunContext): boolean {
  if (rule.type !== 'rule') return rule.type === 'and' ? rule.rules.every((r) => evaluate(r, ctx)) : rule.rules.some((r) => evaluate(r, ctx));
  const actual = lookup(ctx, rule.field);
  const value = rule.value;
  switch (rule.operator) {
    case 'eq':
      return same(actual, value);
    case 'neq':
      return !same(actual, value);
    case 'gt':
      return typeof actual === 'number' && actual > (value as number);
    case 'gte':
      return typeof actual === 'number' && actual >= (value as number);
    case 'lt':
      return typeof actual === 'number' && actual < (value as number);
    case 'lte':
      return typeof actual === 'number' && actual <= (value as number);
    case 'contains':
      return Array.isArray(actual) ? actual.includes(value) : typeof actual === 'string' && actual.includes(value as string);
    case 'starts_with':
      return typeof actual === 'string' && actual.startsWith(value as string);
    case 'ends_with':
      return typeof actual === 'string' && actual.endsWith(value as string);
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'is_empty':
      return (
        actual === undefined ||
        actual === null ||
        actual === '' ||
        (Array.isArray(actual) && actual.length === 0) ||
        (isObject(actual) && Object.keys(actual).length === 0)
      );
    default:
      return false;
  }
}

/** Equality as a condition means it: a missing field is null. */
function same(actual: unknown, value: unknown): boolean {
  return (actual ?? null) === value;
}
