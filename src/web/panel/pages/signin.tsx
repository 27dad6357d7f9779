/** Sign in with the master key or a project API key (checked with `GET /admin/whoami`). */
import { useState } from 'preact/hooks';
import { ApiError, call, type Session } from '../api';

export function SignIn({ onSignIn }: { onSignIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const k = key.trim();
    if (!k) {
      setError('Enter the master key or an API key of your project.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const who = await call<{ kind: 'master' | 'project'; siteId?: string }>(k, 'GET', '/admin/whoami');
      onSignIn({ key: k, kind: who.kind, siteId: who.siteId });
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'This key is not valid on this server.' : err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin">
      <h1>
        sitesift <span>Control Panel</span>
      </h1>
      <form onSubmit={submit} class="card">
        <div class={`field${error ? ' field-invalid' : ''}`}>
          <label for="key">Master key or project API key</label>
          <input
            id="key"
            type="password"
            autoComplete="current-password"
            value={key}
            aria-invalid={!!error}
            aria-describedby={error ? 'key-err' : 'key-hint'}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          />
          <p class="hint" id="key-hint">
            Kept in this tab only (sessionStorage) and sent as a Bearer header; it never appears in a URL.
          </p>
          {error && (
            <p class="field-error" id="key-err" role="alert">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
