/** API keys of a project: generate (token shown once), label, delete, last used. */
import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { Confirm, errorsOf, Notice, TextInput, TokenOnce, useLoad, when, type FieldErrors } from '../ui';

interface Key {
  id: string;
  label: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export function KeysPage({ api }: { api: Api }) {
  const keys = useLoad(() => api.admin<{ keys: Key[] }>('GET', '/keys').then((r) => r.keys), []);
  const [label, setLabel] = useState('');
  const [errs, setErrs] = useState<FieldErrors | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const [editing, setEditing] = useState<{ id: string; label: string; errs: FieldErrors | null } | null>(null);
  const [deleting, setDeleting] = useState<Key | null>(null);
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);

  async function generate(e: Event) {
    e.preventDefault();
    setErrs(null);
    try {
      const r = await api.admin<{ token: string }>('POST', '/keys', { label: label.trim() });
      setToken(r.token);
      setLabel('');
      keys.reload();
    } catch (err) {
      setErrs(errorsOf(err));
    }
  }

  async function rename(e: Event) {
    e.preventDefault();
    if (!editing) return;
    try {
      await api.admin('PATCH', `/keys/${encodeURIComponent(editing.id)}`, { label: editing.label });
      setEditing(null);
      keys.reload();
    } catch (err) {
      setEditing({ ...editing, errs: errorsOf(err) });
    }
  }

  async function remove(k: Key) {
    setDeleting(null);
    try {
      await api.admin('DELETE', `/keys/${encodeURIComponent(k.id)}`);
      setNotice({ kind: 'ok', text: `Key ${k.label || k.prefix} was deleted; requests with it now fail.` });
      keys.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: errorsOf(err).message });
    }
  }

  const signedInWith = api.session.kind === 'project' ? keys.data?.find((k) => api.session.key.startsWith(k.prefix)) : undefined;

  return (
    <section>
      <h1>API keys</h1>
      <p class="lead">
        Keys authorise indexing, reports and settings of <strong>{api.siteId}</strong> (the <code>token</code> parameter or an <code>Authorization: Bearer</code> header). Use one per
        environment; delete a key to revoke it at once.
      </p>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      {keys.error && <Notice kind="error">{keys.error}</Notice>}
      <table class="table">
        <caption class="sr-only">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Key starts with</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(keys.data ?? []).map((k) => (
            <tr key={k.id}>
              <th scope="row">
                {editing?.id === k.id ? (
                  <form class="inline-form" onSubmit={rename}>
                    <TextInput label="Label" path="label" errs={editing.errs} value={editing.label} onChange={(v) => setEditing({ ...editing, label: v })} />
                    <button type="submit" class="small">
                      Save
                    </button>
                    <button type="button" class="small" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  <>
                    {k.label || <em>no label</em>}
                    {k === signedInWith && <span class="badge">this session</span>}
                  </>
                )}
              </th>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{when(k.createdAt)}</td>
              <td>{k.lastUsedAt ? when(k.lastUsedAt) : 'never'}</td>
              <td class="row-actions">
                <button type="button" class="small" onClick={() => setEditing({ id: k.id, label: k.label, errs: null })} aria-label={`Rename key ${k.label || k.prefix}`}>
                  Rename
                </button>
                <button type="button" class="small danger" onClick={() => setDeleting(k)} aria-label={`Delete key ${k.label || k.prefix}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Generate a key</h2>
      {token ? (
        <TokenOnce token={token} onDone={() => setToken(null)} />
      ) : (
        <form class="card form-row" onSubmit={generate}>
          <TextInput label="Label" path="label" errs={errs} value={label} onChange={setLabel} placeholder="e.g. production importer" />
          <button type="submit" class="primary">
            Generate key
          </button>
        </form>
      )}
      <Confirm
        open={deleting !== null}
        title="Delete this key?"
        body={
          <p>
            Requests with the key <code>{deleting?.prefix}…</code> ({deleting?.label || 'no label'}) fail from now on. This cannot be undone.
          </p>
        }
        action="Delete key"
        onConfirm={() => deleting && remove(deleting)}
        onClose={() => setDeleting(null)}
      />
    </section>
  );
}
