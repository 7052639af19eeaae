// Bounce classes: what a reply that is not a delivery says about whom (README.md, "Bounce classes
// and incidents"). `recipient` is the address's fault (no such user, disabled, bad domain) and is
// the only class that suppresses at once; `reputation` and `authentication` are the sender's
// (incidents); the others are the message, the receiving system's policy, its rate, the route, or
// unknown.
//
// The rules are data: src/mail/bounce-classes.toml ships them, `delivery.bounce_classes` in the
// configuration overrides them key by key, and BounceClassifier compiles both once. A reply is
// classified by the first pattern rule whose texts match (provider texts are the most specific),
// else by its enhanced status code (RFC 3463 §3: the whole code, then class.subject), else by its
// basic reply code (RFC 5321 §4.2.3), else `unknown`. The same rules classify the Status and
// Diagnostic-Code of a DSN (RFC 3464 §2.3.4, §2.3.6).
import shippedText from './bounce-classes.toml' with { type: 'text' };
import { enhancedCode } from './smtp-reply';
import { BOUNCE_CLASSES, type BounceClass } from './bounce-class-names';

export { BOUNCE_CLASSES, type BounceClass, SENDER_CLASSES } from './bounce-class-names';

/** What one reply is, for classifying: its basic code, its enhanced code (RFC 3463), its text. */
export interface ClassifiedInput {
  code: number | null;
  enhanced: string | null;
  text: string;
}

/** A pattern rule: `match` (case-insensitive regular expressions, any of which), `codes` (reply or enhanced code prefixes the reply must have, none: any). */
export interface PatternRule {
  class: BounceClass;
  match: string[];
  codes: string[];
}

/** A rule table as a file or the configuration writes it: any part of it. */
export interface BounceRulesTable {
  enhanced?: Record<string, BounceClass>;
  reply?: Record<string, BounceClass>;
  patterns?: Record<string, Partial<PatternRule>>;
}

/** A rule the shipped file or the configuration gets wrong: `key` is its dotted key, `message` says where. */
export class BounceRuleError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

const CLASSES = new Set<string>(BOUNCE_CLASSES);
const ENHANCED_KEY = /^[245]\.\d{1,3}(\.\d{1,3})?$/;
const REPLY_KEY = /^[245]\d\d$/;
const RULE_NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const CODE_PREFIX = /^([245]\d{0,2}|[245]\.\d{1,3}(\.\d{1,3})?)$/;

/** Where a rule table comes from: how its keys are named in errors (the file's line, or the configuration key). */
export interface RuleSource {
  /** `src/mail/bounce-classes.toml` or `delivery.bounce_classes`. */
  name: string;
  /** The file's text, to name the line of a key (the shipped file); absent for the configuration. */
  text?: string;
}

/** The error for `path` (dotted, within the table) of `source`. */
function ruleError(source: RuleSource, path: string[], why: string): BounceRuleError {
  if (source.text === undefined) return new BounceRuleError(`${source.name}.${path.join('.')}`, `config: \`${source.name}.${path.join('.')}\` ${why}`);
  const line = lineOf(source.text, path);
  return new BounceRuleError(path.join('.'), `${source.name}${line ? ` line ${line}` : ''}: \`${path.join('.')}\` ${why}`);
}

/** The 1-based line of a key in a TOML text written as the shipped file is (`[table]` or `[table.name]` headers, `key = …` lines). */
export function lineOf(text: string, path: string[]): number | null {
  const lines = text.split('\n');
  const unquote = (k: string) => k.trim().replace(/^["']|["']$/g, '');
  // The header of the table holding the key: `[patterns.name]` for a rule's key, `[enhanced]` for a code.
  const table = path.length > 2 ? path.slice(0, 2) : path.slice(0, 1);
  const key = path.length > table.length ? path[table.length] : null;
  let inTable = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    const header = /^\[([^\]]+)\]/.exec(l);
    if (header) {
      const name = header[1].split('.').map(unquote);
      inTable = name.length === table.length && name.every((p, j) => p === table[j]);
      if (inTable && key === null) return i + 1;
      continue;
    }
    if (inTable && key !== null) {
      const kv = /^("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=/.exec(l);
      if (kv && unquote(kv[1]) === key) return i + 1;
    }
  }
  return null;
}

/** A class name, or the error naming the key. */
function classOf(source: RuleSource, path: string[], v: unknown): BounceClass {
  if (typeof v !== 'string' || !CLASSES.has(v))
    throw ruleError(source, path, `names an unknown class ${JSON.stringify(v)} (one of ${BOUNCE_CLASSES.join(', ')})`);
  return v as BounceClass;
}

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function strings(source: RuleSource, path: string[], v: unknown): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) throw ruleError(source, path, 'must be a list of strings');
  return v as string[];
}

/** Check a rule table (the shipped file's, or the configuration's overrides): every key, class, pattern and code. */
export function parseRules(source: RuleSource, raw: unknown): BounceRulesTable {
  if (!isTable(raw)) throw ruleError(source, [], 'must be a table');
  const out: BounceRulesTable = {};
  for (const [part, value] of Object.entries(raw)) {
    if (part === 'enhanced' || part === 'reply') {
      if (!isTable(value)) throw ruleError(source, [part], 'must be a table of codes and classes');
      const codes: Record<string, BounceClass> = {};
      for (const [code, cls] of Object.entries(value)) {
        if (!(part === 'enhanced' ? ENHANCED_KEY : REPLY_KEY).test(code))
          throw ruleError(
            source,
            [part, code],
            part === 'enhanced' ? 'is not an enhanced status code such as 5.1.1 or 5.7 (RFC 3463)' : 'is not a reply code such as 550',
          );
        codes[code] = classOf(source, [part, code], cls);
      }
      out[part] = codes;
    } else if (part === 'patterns') {
      if (!isTable(value)) throw ruleError(source, [part], 'must be a table of named rules');
      const rules: Record<string, Partial<PatternRule>> = {};
      for (const [name, rule] of Object.entries(value)) {
        if (!RULE_NAME.test(name)) throw ruleError(source, [part, name], 'is not a rule name: 1-63 lowercase letters, digits, `_`, `.` or `-`');
        if (!isTable(rule)) throw ruleError(source, [part, name], 'must be a table with `class` and `match`');
        const r: Partial<PatternRule> = {};
        for (const [k, v] of Object.entries(rule)) {
          const path = [part, name, k];
          if (k === 'class') r.class = classOf(source, path, v);
          else if (k === 'match') {
            r.match = strings(source, path, v);
            for (const p of r.match) {
              try {
                new RegExp(p, 'i');
              } catch (e) {
                throw ruleError(source, path, `has a pattern that is not a regular expression: ${JSON.stringify(p)} (${(e as Error).message})`);
              }
            }
          } else if (k === 'codes') {
            r.codes = strings(source, path, v);
            const bad = r.codes.find((c) => !CODE_PREFIX.test(c));
            if (bad !== undefined)
              throw ruleError(source, path, `must list reply or enhanced codes or their prefixes such as 550, 5.7 or 5.7.1 (got ${JSON.stringify(bad)})`);
          } else throw ruleError(source, path, 'is not a rule setting (class, match, codes)');
        }
        rules[name] = r;
      }
      out.patterns = rules;
    } else throw ruleError(source, [part], 'is not a rule table (enhanced, reply, patterns)');
  }
  return out;
}

/** The rule file shipped with Posthorn, as its source (the text, to name lines in errors). */
export const SHIPPED_SOURCE: RuleSource = { name: 'src/mail/bounce-classes.toml', text: shippedText as unknown as string };

let shipped: BounceRulesTable | null = null;

/** The shipped rules, parsed and checked on first use (a start-up refuses with the line at fault). */
export function shippedRules(): BounceRulesTable {
  if (shipped) return shipped;
  let raw: unknown;
  try {
    raw = Bun.TOML.parse(SHIPPED_SOURCE.text!);
  } catch (e) {
    const line = (e as { line?: number }).line;
    throw new BounceRuleError('', `${SHIPPED_SOURCE.name}${line ? ` line ${line}` : ''}: ${(e as Error).message}`);
  }
  shipped = parseRules(SHIPPED_SOURCE, raw);
  return shipped;
}

interface Compiled {
  name: string;
  class: BounceClass;
  re: RegExp;
  codes: string[];
}

/** Continuation lines' codes inside a folded reply (`… 550-5.7.1 more text`): left out when matching texts. */
const CODE_FRAGMENT = /(?:^|\s)[245]\d\d[\s-](?:[245]\.\d{1,3}\.\d{1,3}\s)?/g;

/** Does a reply carry one of these code prefixes (none: any reply)? */
function hasCode(codes: string[], code: number | null, enhanced: string | null): boolean {
  if (!codes.length) return true;
  return codes.some((c) => (c.includes('.') ? !!enhanced && (enhanced === c || enhanced.startsWith(`${c}.`)) : code !== null && String(code).startsWith(c)));
}

/** The shipped rules overridden key by key by the configuration's, compiled once. */
export class BounceClassifier {
  private readonly patterns: Compiled[];
  private readonly enhanced: Record<string, BounceClass>;
  private readonly reply: Record<string, BounceClass>;

  /** `overrides`: `delivery.bounce_classes` (checked here: a bad one throws BounceRuleError naming its key). */
  constructor(overrides: unknown = {}, base: BounceRulesTable = shippedRules()) {
    const own = parseRules({ name: 'delivery.bounce_classes' }, overrides);
    this.enhanced = { ...base.enhanced, ...own.enhanced };
    this.reply = { ...base.reply, ...own.reply };
    // Rules the configuration adds come first; a shipped rule it overrides keeps its place.
    const shippedNames = Object.keys(base.patterns ?? {});
    const added = Object.keys(own.patterns ?? {}).filter((n) => !shippedNames.includes(n));
    this.patterns = [...added, ...shippedNames].map((name) => {
      const rule = { codes: [], ...base.patterns?.[name], ...own.patterns?.[name] };
      const source = own.patterns?.[name] ? { name: 'delivery.bounce_classes' } : SHIPPED_SOURCE;
      if (!rule.class) throw ruleError(source, ['patterns', name, 'class'], 'is required');
      if (!rule.match) throw ruleError(source, ['patterns', name, 'match'], 'is required');
      // An empty list switches a shipped rule off.
      return { name, class: rule.class, codes: rule.codes, re: rule.match.length ? new RegExp(rule.match.join('|'), 'i') : /(?!)/ };
    });
  }

  /** The class of a reply (`{code, enhanced, text}`), or of an SMTP reply as smtp-reply.ts parses it. */
  classify(r: ClassifiedInput): BounceClass {
    const hay = r.text.replace(CODE_FRAGMENT, ' ');
    for (const p of this.patterns) if (hasCode(p.codes, r.code, r.enhanced) && p.re.test(hay)) return p.class;
    if (r.enhanced) {
      const exact = this.enhanced[r.enhanced];
      if (exact) return exact;
      const subject = this.enhanced[r.enhanced.slice(0, r.enhanced.indexOf('.', 2))];
      if (subject) return subject;
    }
    return (r.code !== null && this.reply[String(r.code)]) || 'unknown';
  }

  /** Which rule decided (tests, the docs): a pattern's name, `enhanced <code>`, `reply <code>`, or null. */
  ruleFor(r: ClassifiedInput): string | null {
    const hay = r.text.replace(CODE_FRAGMENT, ' ');
    for (const p of this.patterns) if (hasCode(p.codes, r.code, r.enhanced) && p.re.test(hay)) return p.name;
    if (r.enhanced) {
      if (this.enhanced[r.enhanced]) return `enhanced ${r.enhanced}`;
      const subject = r.enhanced.slice(0, r.enhanced.indexOf('.', 2));
      if (this.enhanced[subject]) return `enhanced ${subject}`;
    }
    return r.code !== null && this.reply[String(r.code)] ? `reply ${r.code}` : null;
  }
}

/** An SMTP reply (smtp-reply.ts `Reply`) as the classifier reads it. */
export function replyInput(r: { code: number; text: string }): ClassifiedInput {
  return { code: r.code, enhanced: enhancedCode(r), text: r.text };
}

/**
 * A failed recipient of a DSN (RFC 3464 §2.3) as the classifier reads it: the Diagnostic-Code's
 * text without its type (`smtp; 550 5.1.1 …` → `550 5.1.1 …`) and reply code, and the Status — or
 * the Diagnostic-Code's enhanced code when the Status only says X.0.0 (Exim reports 5.0.0 for
 * every SMTP rejection).
 */
export function dsnInput(status: string | null, diagnostic: string | null): ClassifiedInput {
  const text = (diagnostic ?? '').replace(/^\s*[A-Za-z0-9-]+\s*;\s*/, '').trim();
  const code = /^([245]\d\d)\b/.exec(text);
  const inText = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(text);
  const enhanced = status && (!/\.0\.0$/.test(status) || !inText) ? status : inText ? `${inText[1]}.${inText[2]}.${inText[3]}` : null;
  return { code: code ? Number(code[1]) : null, enhanced, text: text || (status ?? '') };
}

/** The links a reply names (a delisting form, a postmaster page), at most five, in order. */
export function linksIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:https?:\/\/|www\.)[^\s<>"'`\])]+/gi)) {
    const url = m[0].replace(/[.,;:!?]+$/, '');
    const full = /^www\./i.test(url) ? `http://${url}` : url;
    if (!out.includes(full)) out.push(full);
    if (out.length === 5) break;
  }
  return out;
}
