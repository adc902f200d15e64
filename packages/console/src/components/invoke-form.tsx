import { useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { openInvocation } from '../route';
import type { AgentDescription, InvocationView, JsonSchema } from '../types';

type FieldKind = 'text' | 'textarea' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  schema: JsonSchema;
}

/**
 * A form built from the agent's input schema (docs/guides/console.md `[data-role="invoke-form"]`): one field
 * per property (`name=<property>`), typed by its schema; submitting invokes the agent and opens
 * the run. An input without properties is one JSON field, `input`.
 */
export function InvokeForm({ agent }: { agent: AgentDescription }) {
  const fields = fieldsOf(agent.input);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [problems, setProblems] = useState<{ path: string; message: string }[]>([]);
  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    let input: unknown;
    try {
      input = fields ? readFields(form, fields) : parseJson(fieldValue(form, 'input'), 'input');
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    setBusy(true);
    setError(undefined);
    setProblems([]);
    try {
      const view = await api<InvocationView>(`/agents/${encodeURIComponent(agent.name)}/invoke?wait=0`, {
        method: 'POST',
        body: input,
      });
      openInvocation(view.id);
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setProblems(err.details);
      setBusy(false);
    }
  };
  return (
    <form class="invoke-form" data-role="invoke-form" onSubmit={submit}>
      {fields ? (
        fields.map((f) => <FieldInput key={f.name} field={f} agent={agent.name} />)
      ) : (
        <label>
          input (JSON)
          <textarea name="input" rows={4} spellcheck={false} defaultValue="{}" />
        </label>
      )}
      {error && <p class="error">{error}</p>}
      {problems.length > 0 && (
        <ul class="error">
          {problems.map((p) => (
            <li key={p.path}>
              <code>{p.path || '/'}</code> {p.message}
            </li>
          ))}
        </ul>
      )}
      <button type="submit" data-action="invoke" disabled={busy}>
        {busy ? 'Starting…' : `Invoke ${agent.name}`}
      </button>
    </form>
  );
}

function FieldInput({ field: f, agent }: { field: Field; agent: string }) {
  const id = `f-${agent}-${f.name}`;
  const description = typeof f.schema.description === 'string' ? f.schema.description : undefined;
  const def = f.schema.default;
  const label = (
    <label for={id}>
      <code>{f.name}</code>
      {f.required ? ' (required)' : ''} <span class="hint">{typeLabel(f)}</span>
      {description && <span class="hint"> — {description}</span>}
    </label>
  );
  if (f.kind === 'boolean') {
    return (
      <div class="field check">
        <input id={id} name={f.name} type="checkbox" defaultChecked={def === true} />
        {label}
      </div>
    );
  }
  let control: preact.JSX.Element;
  if (f.kind === 'enum') {
    const options = (f.schema.enum as unknown[]).map((v) => JSON.stringify(v));
    control = (
      <select id={id} name={f.name} required={f.required}>
        {!f.required && <option value="">(none)</option>}
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === 'number' || f.kind === 'integer') {
    control = (
      <input
        id={id}
        name={f.name}
        type="number"
        step={f.kind === 'integer' ? '1' : 'any'}
        required={f.required}
        defaultValue={typeof def === 'number' ? String(def) : ''}
      />
    );
  } else if (f.kind === 'text') {
    control = (
      <input
        id={id}
        name={f.name}
        type="text"
        required={f.required}
        defaultValue={typeof def === 'string' ? def : ''}
      />
    );
  } else {
    control = (
      <textarea
        id={id}
        name={f.name}
        rows={f.kind === 'json' ? 3 : 4}
        required={f.required}
        spellcheck={f.kind !== 'json'}
        defaultValue={def === undefined ? '' : f.kind === 'json' ? JSON.stringify(def) : String(def)}
      />
    );
  }
  return (
    <div class="field">
      {label}
      {control}
    </div>
  );
}

/** The fields of an object schema with properties; undefined for any other schema. */
function fieldsOf(schema: JsonSchema | null): Field[] | undefined {
  const props = schema?.properties;
  if (!props || typeof props !== 'object' || Object.keys(props).length === 0) return undefined;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    kind: kindOf(s ?? {}),
    required: required.has(name),
    schema: s ?? {},
  }));
}

function kindOf(s: JsonSchema): FieldKind {
  if (Array.isArray(s.enum) && s.enum.length > 0) return 'enum';
  switch (s.type) {
    case 'string':
      return typeof s.maxLength === 'number' && s.maxLength <= 200 ? 'text' : 'textarea';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    default:
      return 'json';
  }
}

function typeLabel(f: Field): string {
  if (f.kind === 'json') return 'JSON';
  if (f.kind === 'enum') return 'one of';
  if (f.kind === 'text' || f.kind === 'textarea') return 'text';
  return f.kind;
}

/** The input the fields hold: empty optional fields left out, each value typed by its schema. */
function readFields(form: HTMLFormElement, fields: Field[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.kind === 'boolean') {
      const box = form.elements.namedItem(f.name) as HTMLInputElement | null;
      input[f.name] = box?.checked === true;
      continue;
    }
    const raw = fieldValue(form, f.name);
    if (raw === '' && !(f.required && (f.kind === 'text' || f.kind === 'textarea'))) continue;
    if (f.kind === 'number' || f.kind === 'integer') input[f.name] = Number(raw);
    else if (f.kind === 'enum' || f.kind === 'json') input[f.name] = parseJson(raw, f.name);
    else input[f.name] = raw;
  }
  return input;
}

function fieldValue(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name) as
    | HTMLInputElement
    | HTMLTextAreaElement
    | HTMLSelectElement
    | null;
  return el?.value ?? '';
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${name} is not valid JSON.`);
  }
}
