// The visual automation builder (docs/api.md §24; loaded on demand by automations.tsx):
// steps as a graph on a pan-and-zoom canvas (@xyflow/system's XYPanZoom, its bezier edge paths),
// nodes rendered by Preact. Add a step (below the one selected, connected from it), connect by
// clicking an output handle then a step (or by the "Then" fields of the step's panel, the keyboard
// way), configure in the panel, delete. Saved through POST/PATCH /automations, the SDK's routes,
// whose checks (src/automations/definition.ts) are the validation: their error is shown, and the
// step it names is marked.
import { getBezierPath, infiniteExtent, PanOnScrollMode, type PanZoomInstance, Position, XYPanZoom } from '@xyflow/system';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { OUTGOING } from '../../../src/automations/step-connections';
import type { Automation } from '../../../src/schemas/automations';
import { page, patch, post, url } from '../api';
import { navigate } from '../router';
import { ErrorBox, Loading, notify, PageHeader, useGet, useLeaveWarning } from '../ui';

type StepType = Automation['steps'][number]['type'];
type ConnType = Automation['connections'][number]['type'];
interface Step {
  key: string;
  type: StepType;
  config: Record<string, unknown>;
  x: number;
  y: number;
}
interface Conn {
  from: string;
  to: string;
  type: ConnType;
}

const TYPE_LABEL: Record<StepType, string> = {
  trigger: 'Trigger',
  delay: 'Wait',
  send_email: 'Send email',
  wait_for_event: 'Wait for event',
  condition: 'Condition',
  contact_update: 'Update contact',
  contact_delete: 'Delete contact',
  add_to_segment: 'Add to segment',
  remove_from_segment: 'Remove from segment',
};
const CONN_LABEL: Record<ConnType, string> = {
  default: 'next',
  condition_met: 'yes',
  condition_not_met: 'no',
  event_received: 'received',
  timeout: 'timed out',
};
const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with', 'exists', 'is_empty'];
const DEFAULT_CONFIG: Record<StepType, Record<string, unknown>> = {
  trigger: { event_name: '' },
  delay: { duration: '1 day' },
  send_email: { template: { id: '' } },
  wait_for_event: { event_name: '', timeout: '3 days' },
  condition: { type: 'rule', field: 'event.', operator: 'eq', value: '' },
  contact_update: { unsubscribed: false },
  contact_delete: {},
  add_to_segment: { segment_id: '' },
  remove_from_segment: { segment_id: '' },
};

const W = 220;
const H = 76;

/** Positions for steps without one: rows by distance from the trigger, side by side within a row. */
export function layout(steps: Omit<Step, 'x' | 'y'>[], conns: Conn[]): Step[] {
  const depth = new Map<string, number>();
  const start = steps.find((s) => s.type === 'trigger') ?? steps[0];
  const queue = start ? [start.key] : [];
  if (start) depth.set(start.key, 0);
  while (queue.length) {
    const k = queue.shift()!;
    for (const c of conns)
      if (c.from === k && !depth.has(c.to)) {
        depth.set(c.to, depth.get(k)! + 1);
        queue.push(c.to);
      }
  }
  let extra = Math.max(0, ...depth.values()) + 1;
  const rows = new Map<number, number>();
  return steps.map((s) => {
    const d = depth.get(s.key) ?? extra++;
    const i = rows.get(d) ?? 0;
    rows.set(d, i + 1);
    return { ...s, x: i * (W + 40), y: d * (H + 70) };
  });
}

/** The output handle's point for connection type `t` of step `s`. */
function handlePoint(s: Step, t: ConnType) {
  const outs = OUTGOING[s.type];
  const i = Math.max(0, outs.indexOf(t));
  return { x: s.x + ((i + 1) * W) / (outs.length + 1), y: s.y + H };
}

/** The step a server error names (`steps[2].config…`, `connections[0]…`), to mark it. */
function blamed(message: string, steps: Step[], conns: Conn[]): string | null {
  const s = /steps\[(\d+)\]/.exec(message);
  if (s) return steps[Number(s[1])]?.key ?? null;
  const c = /connections\[(\d+)\]/.exec(message);
  return c ? (conns[Number(c[1])]?.from ?? null) : null;
}

const newKey = (type: StepType, steps: Step[]) => {
  let i = 1;
  while (steps.some((s) => s.key === `${type}_${i}`)) i++;
  return `${type}_${i}`;
};

export function AutomationBuilderPage({ id }: { id?: string }) {
  const existing = useGet(id ? url('/automations/:id', { id }) : null);
  if (id && existing.error) return <ErrorBox error={existing.error} />;
  if (id && !existing.data) return <Loading />;
  return <Builder a={existing.data ?? null} />;
}

function Builder({ a }: { a: Automation | null }) {
  const [name, setName] = useState(a?.name ?? 'New automation');
  const [steps, setSteps] = useState<Step[]>(() =>
    a
      ? layout(
          a.steps.map((s) => ({ key: s.key, type: s.type, config: s.config })),
          a.connections,
        )
      : [{ key: 'trigger', type: 'trigger', config: { event_name: '' }, x: 0, y: 0 }],
  );
  const [conns, setConns] = useState<Conn[]>(() => (a ? a.connections.map((c) => ({ ...c })) : []));
  const [selected, setSelected] = useState<string | null>(steps[0]?.key ?? null);
  const [connecting, setConnecting] = useState<{ from: string; type: ConnType } | null>(null);
  const [error, setError] = useState<{ message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const initial = useMemo(() => JSON.stringify([a?.name ?? 'New automation', steps.map(({ x, y, ...s }) => s), conns]), []);
  const dirty = JSON.stringify([name, steps.map(({ x, y, ...s }) => s), conns]) !== initial;
  useLeaveWarning(dirty && !busy);
  const bad = error ? blamed(error.message, steps, conns) : null;

  const update = (key: string, patchStep: Partial<Step>) => {
    setSteps((ss) => ss.map((s) => (s.key === key ? { ...s, ...patchStep } : s)));
    if (patchStep.key && patchStep.key !== key) {
      setConns((cs) => cs.map((c) => ({ ...c, from: c.from === key ? patchStep.key! : c.from, to: c.to === key ? patchStep.key! : c.to })));
      setSelected(patchStep.key);
    }
  };
  const connect = (from: string, type: ConnType, to: string | null) =>
    setConns((cs) => [...cs.filter((c) => !(c.from === from && c.type === type)), ...(to && to !== from ? [{ from, to, type }] : [])]);
  const add = (type: StepType) => {
    const at = steps.find((s) => s.key === selected);
    const key = newKey(type, steps);
    const below = at ? { x: at.x, y: at.y + H + 70 } : { x: 0, y: Math.max(0, ...steps.map((s) => s.y + H + 70)) };
    setSteps((ss) => [...ss, { key, type, config: structuredClone(DEFAULT_CONFIG[type]), ...below }]);
    if (at && OUTGOING[at.type].length && !conns.some((c) => c.from === at.key && c.type === OUTGOING[at.type][0])) connect(at.key, OUTGOING[at.type][0]!, key);
    setSelected(key);
  };
  const remove = (key: string) => {
    setSteps((ss) => ss.filter((s) => s.key !== key));
    setConns((cs) => cs.filter((c) => c.from !== key && c.to !== key));
    setSelected(null);
  };
  const save = async () => {
    setBusy(true);
    setError(null);
    const body = { name, steps: steps.map(({ key, type, config }) => ({ key, type, config })), connections: conns };
    try {
      if (a) {
        await patch(url('/automations/:id', { id: a.id }), body);
        notify('Automation saved.');
        navigate(page`/dashboard/automations/${a.id}`, { force: true });
      } else {
        const made = await post('/automations', { ...body, status: 'disabled' });
        notify('Automation created (disabled until you enable it).');
        navigate(page`/dashboard/automations/${made.id}`, { force: true });
      }
    } catch (e) {
      setError(e as Error);
      setBusy(false);
    }
  };
  const sel = steps.find((s) => s.key === selected) ?? null;
  return (
    <>
      <PageHeader
        need="member"
        back={a ? { href: page`/dashboard/automations/${a.id}`, label: a.name } : { href: '/dashboard/automations', label: 'Automations' }}
        title={a ? `Edit ${a.name}` : 'New automation'}
        description="Click a step to configure it; click a step's ● handle, then another step, to connect them."
        actions={
          <button type="button" class="btn primary" disabled={busy} onClick={save}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        }
      />
      <div role="alert">{error && <ErrorBox error={error} />}</div>
      <div class="builder-bar">
        <label class="builder-name">
          <span>Name</span>
          <input class="builder-name-input" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="builder-add">
          <span>Add a step</span>
          <select
            value=""
            onChange={(e) => {
              const t = e.currentTarget.value as StepType;
              e.currentTarget.value = '';
              if (t) add(t);
            }}
          >
            <option value="">Choose a type…</option>
            {(Object.keys(TYPE_LABEL) as StepType[])
              .filter((t) => t !== 'trigger' || !steps.some((s) => s.type === 'trigger'))
              .map((t) => (
                <option value={t}>{TYPE_LABEL[t]}</option>
              ))}
          </select>
        </label>
        {connecting && (
          <span class="callout small" role="status">
            Connecting from <span class="mono">{connecting.from}</span> ({CONN_LABEL[connecting.type]}): click a step.{' '}
            <button type="button" class="btn small" onClick={() => setConnecting(null)}>
              Cancel
            </button>
          </span>
        )}
      </div>
      <div class="builder">
        <Canvas
          steps={steps}
          conns={conns}
          selected={selected}
          bad={bad}
          onSelect={(k) => {
            if (connecting) {
              connect(connecting.from, connecting.type, k);
              setConnecting(null);
            } else setSelected(k);
          }}
          onMove={(k, x, y) => update(k, { x, y })}
          onHandle={(from, type) => setConnecting({ from, type })}
        />
        <aside class="builder-panel" aria-label="Step settings">
          {sel ? (
            <StepPanel
              step={sel}
              steps={steps}
              conns={conns}
              invalid={bad === sel.key}
              onChange={(p) => update(sel.key, p)}
              onConnect={(t, to) => connect(sel.key, t, to)}
              onRemove={() => remove(sel.key)}
            />
          ) : (
            <p class="muted">Choose a step to configure it, or add one.</p>
          )}
        </aside>
      </div>
    </>
  );
}

function Canvas({
  steps,
  conns,
  selected,
  bad,
  onSelect,
  onMove,
  onHandle,
}: {
  steps: Step[];
  conns: Conn[];
  selected: string | null;
  bad: string | null;
  onSelect: (k: string) => void;
  onMove: (k: string, x: number, y: number) => void;
  onHandle: (from: string, type: ConnType) => void;
}) {
  const pane = useRef<HTMLDivElement>(null);
  // Template names for the send_email steps' summaries.
  const templates = useGet('/templates');
  const names = new Map((templates.data?.data ?? []).map((t) => [t.id, t.name]));
  const viewport = useRef<HTMLDivElement>(null);
  const zoom = useRef<PanZoomInstance | null>(null);
  const scale = useRef(1);
  useEffect(() => {
    const box = pane.current!.getBoundingClientRect();
    const minX = Math.min(...steps.map((s) => s.x));
    const maxX = Math.max(...steps.map((s) => s.x + W));
    const start = { x: Math.max(16, (box.width - (maxX - minX)) / 2 - minX), y: 24, zoom: 1 };
    const apply = (v: { x: number; y: number; zoom: number }) => {
      scale.current = v.zoom;
      // Set through the DOM (the CSP allows it; no inline style attribute).
      viewport.current!.style.transform = `translate(${v.x}px, ${v.y}px) scale(${v.zoom})`;
    };
    apply(start);
    const z = XYPanZoom({
      domNode: pane.current!,
      minZoom: 0.3,
      maxZoom: 2,
      translateExtent: infiniteExtent,
      viewport: start,
      onDraggingChange: () => {},
      onPanZoom: (_e, v) => apply(v),
    });
    z.update({
      noWheelClassName: 'nowheel',
      noPanClassName: 'nopan',
      preventScrolling: true,
      panOnScroll: false,
      panOnDrag: true,
      panOnScrollMode: PanOnScrollMode.Free,
      panOnScrollSpeed: 0.5,
      userSelectionActive: false,
      zoomOnPinch: true,
      zoomOnScroll: true,
      zoomOnDoubleClick: false,
      zoomActivationKeyPressed: false,
      lib: 'posthorn',
      onTransformChange: () => {},
      connectionInProgress: false,
      paneClickDistance: 0,
    });
    zoom.current = z;
    return () => z.destroy();
  }, []);

  /** Drag a step by its body: pointer moves divided by the zoom; a drag is not also a click. */
  const dragged = useRef(false);
  const drag = (s: Step) => (e: PointerEvent) => {
    if ((e.target as HTMLElement).closest('.flow-handle') || e.button !== 0) return;
    const from = { px: e.clientX, py: e.clientY, x: s.x, y: s.y };
    dragged.current = false;
    const move = (m: PointerEvent) => {
      const dx = (m.clientX - from.px) / scale.current;
      const dy = (m.clientY - from.py) / scale.current;
      if (Math.abs(dx) + Math.abs(dy) > 4) dragged.current = true;
      if (dragged.current) onMove(s.key, Math.round(from.x + dx), Math.round(from.y + dy));
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  };
  const select = (k: string) => {
    if (dragged.current) dragged.current = false;
    else onSelect(k);
  };

  const byKey = new Map(steps.map((s) => [s.key, s]));
  return (
    // A step focused out of view scrolls the pane itself (overflow: hidden still scrolls for focus):
    // that scroll is turned into a pan of the viewport, so the transform stays the one truth.
    <div
      class="flow-pane"
      ref={pane}
      onScroll={(e) => {
        const el = e.currentTarget;
        const z = zoom.current;
        if (!z || (!el.scrollTop && !el.scrollLeft)) return;
        const v = z.getViewport();
        const by = { x: el.scrollLeft, y: el.scrollTop };
        el.scrollTop = 0;
        el.scrollLeft = 0;
        void z.setViewport({ x: v.x - by.x, y: v.y - by.y, zoom: v.zoom });
      }}
    >
      <div class="flow-viewport" ref={viewport}>
        <svg class="flow-edges" aria-hidden="true" width="1" height="1">
          {conns.map((c) => {
            const a = byKey.get(c.from);
            const b = byKey.get(c.to);
            if (!a || !b) return null;
            const p = handlePoint(a, c.type);
            const [d, lx, ly] = getBezierPath({
              sourceX: p.x,
              sourceY: p.y,
              sourcePosition: Position.Bottom,
              targetX: b.x + W / 2,
              targetY: b.y,
              targetPosition: Position.Top,
            });
            return (
              <g>
                <path d={d} class="flow-edge" />
                {c.type !== 'default' && (
                  <text x={lx} y={ly} class="flow-edge-label" text-anchor="middle">
                    {CONN_LABEL[c.type]}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
        {steps.map((s) => (
          <FlowNode
            key={s.key}
            s={s}
            selected={selected === s.key}
            bad={bad === s.key}
            onSelect={select}
            onPointerDown={drag(s)}
            onHandle={onHandle}
            names={names}
          />
        ))}
      </div>
      <div class="flow-zoom nopan">
        <button type="button" class="btn small" aria-label="Zoom in" onClick={() => zoom.current?.scaleBy(1.2)}>
          +
        </button>
        <button type="button" class="btn small" aria-label="Zoom out" onClick={() => zoom.current?.scaleBy(1 / 1.2)}>
          −
        </button>
      </div>
    </div>
  );
}

function FlowNode({
  s,
  names,
  selected,
  bad,
  onSelect,
  onPointerDown,
  onHandle,
}: {
  s: Step;
  selected: boolean;
  bad: boolean;
  onSelect: (k: string) => void;
  onPointerDown: (e: PointerEvent) => void;
  onHandle: (from: string, type: ConnType) => void;
  names: Map<string, string>;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // Placed through the DOM (CSP: no style attribute in the markup).
  useEffect(() => {
    ref.current!.style.transform = `translate(${s.x}px, ${s.y}px)`;
  }, [s.x, s.y]);
  return (
    <div ref={ref} class={`flow-node nopan ${selected ? 'selected' : ''} ${bad ? 'invalid' : ''} t-${s.type}`} onPointerDown={onPointerDown}>
      <button type="button" class="flow-node-body" aria-pressed={selected} onClick={() => onSelect(s.key)}>
        <span class="flow-node-type">{TYPE_LABEL[s.type]}</span>
        <span class="flow-node-sum">{stepSummary(s, names)}</span>
      </button>
      <div class="flow-handles">
        {OUTGOING[s.type].map((t) => (
          <button
            type="button"
            class="flow-handle"
            title={`Connect ${CONN_LABEL[t]}`}
            // The visible label (yes, no…) starts the name (WCAG 2.5.3, label in name).
            aria-label={OUTGOING[s.type].length > 1 ? `${CONN_LABEL[t]}: connect ${s.key} to a step` : `Connect ${s.key} to a step`}
            onClick={() => onHandle(s.key, t)}
          >
            {OUTGOING[s.type].length > 1 ? CONN_LABEL[t] : ''}
          </button>
        ))}
      </div>
    </div>
  );
}

function stepSummary(s: Step, names: Map<string, string>): string {
  const c = s.config;
  switch (s.type) {
    case 'trigger':
    case 'wait_for_event':
      return String(c.event_name || 'no event yet');
    case 'delay':
      return String(c.duration || '');
    case 'send_email':
      return (c.template as { id?: string })?.id
        ? `template ${names.get((c.template as { id: string }).id) ?? (c.template as { id: string }).id}`
        : 'no template yet';
    case 'condition':
      return `${c.field} ${String(c.operator).replace(/_/g, ' ')} ${c.value ?? ''}`;
    default:
      return s.key;
  }
}

function StepPanel({
  step,
  steps,
  conns,
  invalid,
  onChange,
  onConnect,
  onRemove,
}: {
  step: Step;
  steps: Step[];
  conns: Conn[];
  invalid: boolean;
  onChange: (p: Partial<Step>) => void;
  onConnect: (t: ConnType, to: string | null) => void;
  onRemove: () => void;
}) {
  const c = step.config;
  const setConfig = (p: Record<string, unknown>) => onChange({ config: { ...c, ...p } });
  const events = useGet('/events');
  const templates = useGet('/templates');
  const segments = useGet('/segments');
  const text = (key: string, label: string, hint?: string, list?: string) => (
    <Row id={`s-${key}`} label={label} hint={hint}>
      <input id={`s-${key}`} list={list} value={String(c[key] ?? '')} onInput={(e) => setConfig({ [key]: e.currentTarget.value })} />
    </Row>
  );
  let fields: ComponentChildren = null;
  switch (step.type) {
    case 'trigger':
    case 'wait_for_event':
      fields = (
        <>
          {text('event_name', 'Event', 'Sent with resend.events.send(); a new name is fine.', 'builder-events')}
          {step.type === 'wait_for_event' && text('timeout', 'Timeout', 'e.g. 3 days')}
          <datalist id="builder-events">
            {(events.data?.data ?? []).map((e) => (
              <option value={e.name} />
            ))}
          </datalist>
        </>
      );
      break;
    case 'delay':
      fields = text('duration', 'Wait for', 'e.g. 30 minutes, 2 hours, 1 day');
      break;
    case 'send_email':
      fields = (
        <Row id="s-template" label="Template" hint="A published template.">
          <select
            id="s-template"
            value={String((c.template as { id?: string })?.id ?? '')}
            onChange={(e) => setConfig({ template: { ...(c.template as object), id: e.currentTarget.value } })}
          >
            <option value="">Choose a template…</option>
            {(templates.data?.data ?? []).map((t) => (
              <option value={t.id}>{t.name}</option>
            ))}
          </select>
        </Row>
      );
      break;
    case 'condition':
      fields = (
        <>
          {text('field', 'Field', 'event.<field> or contact.<field>')}
          <Row id="s-operator" label="Operator">
            <select id="s-operator" value={String(c.operator)} onChange={(e) => setConfig({ operator: e.currentTarget.value })}>
              {OPERATORS.map((o) => (
                <option value={o}>{o.replace(/_/g, ' ')}</option>
              ))}
            </select>
          </Row>
          {text('value', 'Value')}
        </>
      );
      break;
    case 'add_to_segment':
    case 'remove_from_segment':
      fields = (
        <Row id="s-segment" label="Segment">
          <select id="s-segment" value={String(c.segment_id ?? '')} onChange={(e) => setConfig({ segment_id: e.currentTarget.value })}>
            <option value="">Choose a segment…</option>
            {(segments.data?.data ?? []).map((s) => (
              <option value={s.id}>{s.name}</option>
            ))}
          </select>
        </Row>
      );
      break;
    case 'contact_update':
      fields = (
        <Row id="s-unsub" label="Subscription">
          <select id="s-unsub" value={String(c.unsubscribed)} onChange={(e) => setConfig({ unsubscribed: e.currentTarget.value === 'true' })}>
            <option value="false">Mark subscribed</option>
            <option value="true">Mark unsubscribed</option>
          </select>
        </Row>
      );
      break;
  }
  return (
    <div class={invalid ? 'panel-invalid' : ''}>
      <h2 class="card-title">{TYPE_LABEL[step.type]}</h2>
      <Row id="s-key" label="Key" hint="Names the step in the API and the runs.">
        <input id="s-key" class="mono" value={step.key} onChange={(e) => e.currentTarget.value.trim() && onChange({ key: e.currentTarget.value.trim() })} />
      </Row>
      {fields}
      {OUTGOING[step.type].map((t) => (
        <Row id={`s-then-${t}`} label={OUTGOING[step.type].length > 1 ? `Then (${CONN_LABEL[t]})` : 'Then'}>
          <select
            id={`s-then-${t}`}
            value={conns.find((x) => x.from === step.key && x.type === t)?.to ?? ''}
            onChange={(e) => onConnect(t, e.currentTarget.value || null)}
          >
            <option value="">end</option>
            {steps
              .filter((s) => s.key !== step.key && s.type !== 'trigger')
              .map((s) => (
                <option value={s.key}>
                  {s.key} ({TYPE_LABEL[s.type]})
                </option>
              ))}
          </select>
        </Row>
      ))}
      {step.type !== 'trigger' && (
        <button type="button" class="btn danger ghost" onClick={onRemove}>
          Delete step
        </button>
      )}
    </div>
  );
}

function Row({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && <p class="hint small muted">{hint}</p>}
    </div>
  );
}
