/**
 * Shared pieces of the Control Panel: form controls that show the API's validation message at
 * the field it names (`field` / `errors[].field`, a settings path such as `crawler.maxDepth` or
 * `dataPoints[1].key`), dialogs, the shown-once token box, dates.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

/** Problems of one save, by field path. */
export interface FieldErrors {
  message: string;
  fields: Array<{ field: string; message: string }>;
}

/** The field problems of a failed call (null for anything that is not an API failure). */
export function errorsOf(e: unknown): FieldErrors {
  if (e instanceof ApiError) {
    const fields = [...(e.errors ?? []).map((x) => ({ field: x.field, message: x.message }))];
    if (e.field) fields.push({ field: e.field, message: e.message });
    return { message: e.message, fields };
  }
  return { message: e instanceof Error ? e.message : String(e), fields: [] };
}

/** Strips the `path: ` prefix the settings validator puts before its message. */
function bare(message: string, field: string): string {
  return message.startsWith(field + ': ') ? message.slice(field.length + 2) : message;
}

/**
 * The message for the control at `path`: a problem at `path` itself, or inside it
 * (`path[2]`, `path.x`) when `nested` (list controls, whose items have no control of their own).
 */
export function messageFor(errs: FieldErrors | null, path: string, nested = false): string | null {
  if (!errs) return null;
  for (const f of errs.fields) {
    if (f.field === path) return bare(f.message, f.field);
    if (nested && f.field.startsWith(path + '[')) {
      const m = /^\[(\d+)\]/.exec(f.field.slice(path.length));
      const line = m ? `Line ${Number(m[1]) + 1}: ` : '';
      return line + bare(f.message, f.field);
    }
    if (nested && f.field.startsWith(path + '.')) return bare(f.message, f.field);
  }
  return null;
}

export function idFor(path: string): string {
  return 'f-' + path.replace(/[^A-Za-z0-9_-]/g, '-');
}

interface FieldProps {
  label: string;
  path: string;
  errs: FieldErrors | null;
  hint?: string;
  nested?: boolean;
  children: (a: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ComponentChildren;
  inline?: boolean;
}

/** A labelled control with its hint and its API validation message. */
export function Field({ label, path, errs, hint, nested, children, inline }: FieldProps) {
  const id = idFor(path);
  const msg = messageFor(errs, path, nested);
  const describedBy = [msg ? id + '-err' : '', hint ? id + '-hint' : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${inline ? ' field-inline' : ''}${msg ? ' field-invalid' : ''}`} data-field={path}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-invalid': !!msg, 'aria-describedby': describedBy })}
      {hint && (
        <p class="hint" id={id + '-hint'}>
          {hint}
        </p>
      )}
      {msg && (
        <p class="field-error" id={id + '-err'}>
          {msg}
        </p>
      )}
    </div>
  );
}

type Base = { label: string; path: string; errs: FieldErrors | null; hint?: string };

export function TextInput(p: Base & { value: string; onChange: (v: string) => void; placeholder?: string; type?: string; autoComplete?: string }) {
  return (
    <Field {...p}>
      {(a) => <input {...a} type={p.type ?? 'text'} value={p.value} placeholder={p.placeholder} autoComplete={p.autoComplete ?? 'off'} onInput={(e) => p.onChange((e.currentTarget as HTMLInputElement).value)} />}
    </Field>
  );
}

/** A number control; what cannot be read as a number is sent as typed, for the API to judge. */
export function NumberInput(p: Base & { value: number | string; onChange: (v: number | string) => void; min?: number; max?: number }) {
  return (
    <Field {...p}>
      {(a) => (
        <input
          {...a}
          type="text"
          inputMode="numeric"
          value={String(p.value)}
          onInput={(e) => {
            const v = (e.currentTarget as HTMLInputElement).value;
            p.onChange(v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);
          }}
        />
      )}
    </Field>
  );
}

/** One entry per line (string arrays such as root URLs or patterns); empty lines are dropped. */
export function LinesInput(p: Base & { value: string[] | null; onChange: (v: string[]) => void; rows?: number; placeholder?: string }) {
  // The text is the control's own (blank lines stay while typing); the parent remounts it to reset.
  const [text, setText] = useState((p.value ?? []).join('\n'));
  return (
    <Field {...p} nested>
      {(a) => (
        <textarea
          {...a}
          rows={p.rows ?? 3}
          value={text}
          placeholder={p.placeholder}
          spellcheck={false}
          onInput={(e) => {
            const v = (e.currentTarget as HTMLTextAreaElement).value;
            setText(v);
            p.onChange(v.split('\n').map((l) => l.trim()).filter((l) => l !== ''));
          }}
        />
      )}
    </Field>
  );
}

export function TextArea(p: Base & { value: string; onChange: (v: string) => void; rows?: number }) {
  return <Field {...p}>{(a) => <textarea {...a} rows={p.rows ?? 4} value={p.value} spellcheck={false} onInput={(e) => p.onChange((e.currentTarget as HTMLTextAreaElement).value)} />}</Field>;
}

export function Checkbox(p: Base & { value: boolean; onChange: (v: boolean) => void }) {
  return (
    <Field {...p} inline>
      {(a) => <input {...a} type="checkbox" checked={p.value} onChange={(e) => p.onChange((e.currentTarget as HTMLInputElement).checked)} />}
    </Field>
  );
}

export function Select<T extends string>(p: Base & { value: T; options: Array<[T, string]>; onChange: (v: T) => void }) {
  return (
    <Field {...p}>
      {(a) => (
        <select {...a} value={p.value} onChange={(e) => p.onChange((e.currentTarget as HTMLSelectElement).value as T)}>
          {p.options.map(([v, l]) => (
            <option value={v} key={v}>
              {l}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A status line (`role=status`) or an error (`role=alert`). */
export function Notice({ kind, children }: { kind: 'ok' | 'error' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** A modal dialog (native `<dialog>`: focus trapped, Escape closes). */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <h2 id="dialog-title">{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/** Asks before something that cannot be undone; `confirmText` must be typed when given. */
export function Confirm(p: { open: boolean; title: string; body: ComponentChildren; action: string; confirmText?: string; onConfirm: () => void; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  useEffect(() => setTyped(''), [p.open]);
  const ok = !p.confirmText || typed === p.confirmText;
  return (
    <Dialog title={p.title} open={p.open} onClose={p.onClose}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ok) p.onConfirm();
        }}
      >
        <div class="dialog-body">{p.body}</div>
        {p.confirmText && (
          <div class="field">
            <label for="confirm-text">
              Type <code>{p.confirmText}</code> to confirm
            </label>
            <input id="confirm-text" value={typed} autoComplete="off" onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} />
          </div>
        )}
        <div class="actions">
          <button type="button" onClick={p.onClose}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!ok}>
            {p.action}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A new key's token, shown this once, with a copy button. */
export function TokenOnce({ token, onDone }: { token: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const ref = useRef<HTMLInputElement>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(token);
      setCopied(true);
    } catch {
      ref.current?.select();
      setCopied(document.execCommand?.('copy') ?? false);
    }
  }
  return (
    <div class="token-once" role="region" aria-label="New API key">
      <p>
        <strong>Copy this key now.</strong> It is shown only once; the server keeps only its hash.
      </p>
      <div class="token-row">
        <input ref={ref} readOnly value={token} aria-label="New API key" class="token" onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" class="link" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}

/** A date for tables: local date and time, or a dash. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** `useState` for a value loaded from the API, with its error and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: string | null; loading: boolean; reload: () => void; set: (v: T) => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (v) => {
        if (!live) return;
        setData(v);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (!live) return;
        setError(e instanceof Error ? e.message : String(e));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, n]);
  return { data, error, loading, reload: () => setN((x) => x + 1), set: setData };
}

export type Children = JSX.Element | JSX.Element[] | null;
