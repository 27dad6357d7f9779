/** Projects (master key): the list, create (its first key shown once), delete with confirmation. */
import { useState } from 'preact/hooks';
import { call, type Session } from '../api';
import { Confirm, errorsOf, Notice, TextInput, TokenOnce, useLoad, when, type FieldErrors } from '../ui';

interface Project {
  siteId: string;
  name: string;
  createdAt: string;
  pages: number;
}

export function ProjectsPage({ session }: { session: Session }) {
  const list = useLoad(() => call<{ projects: Project[] }>(session.key, 'GET', '/admin/projects').then((r) => r.projects), []);
  const [siteId, setSiteId] = useState('');
  const [name, setName] = useState('');
  const [errs, setErrs] = useState<FieldErrors | null>(null);
  const [created, setCreated] = useState<{ siteId: string; token: string } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    setErrs(null);
    try {
      const r = await call<{ siteId: string; apiKey: { token: string } }>(session.key, 'POST', '/admin/projects', { body: { siteId: siteId.trim(), name: name.trim() || undefined } });
      setCreated({ siteId: r.siteId, token: r.apiKey.token });
      setSiteId('');
      setName('');
      list.reload();
    } catch (err) {
      setErrs(errorsOf(err));
    }
  }

  async function remove(id: string) {
    setDeleting(null);
    try {
      await call(session.key, 'DELETE', `/admin/projects/${encodeURIComponent(id)}`);
      setNotice(`Project ${id} and all its data were deleted.`);
      list.reload();
    } catch (err) {
      setNotice(errorsOf(err).message);
    }
  }

  return (
    <section>
      <h1>Projects</h1>
      {notice && <Notice kind="info">{notice}</Notice>}
      {list.error && <Notice kind="error">{list.error}</Notice>}
      <table class="table">
        <caption class="sr-only">Projects</caption>
        <thead>
          <tr>
            <th scope="col">Site ID</th>
            <th scope="col">Name</th>
            <th scope="col" class="num">
              Pages
            </th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((p) => (
            <tr key={p.siteId}>
              <th scope="row">
                <a href={`#/p/${encodeURIComponent(p.siteId)}/crawl`}>{p.siteId}</a>
              </th>
              <td>{p.name}</td>
              <td class="num">{p.pages.toLocaleString()}</td>
              <td>{when(p.createdAt)}</td>
              <td class="row-actions">
                <button type="button" class="danger small" onClick={() => setDeleting(p.siteId)} aria-label={`Delete project ${p.siteId}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {list.data && list.data.length === 0 && (
            <tr>
              <td colSpan={5}>No projects yet.</td>
            </tr>
          )}
        </tbody>
      </table>

      <h2>New project</h2>
      {created ? (
        <div class="card">
          <p>
            Project <strong>{created.siteId}</strong> was created with this API key:
          </p>
          <TokenOnce token={created.token} onDone={() => setCreated(null)} />
        </div>
      ) : (
        <form class="card form-grid" onSubmit={create}>
          {errs && !errs.fields.length && <Notice kind="error">{errs.message}</Notice>}
          <TextInput label="Site ID" path="siteId" errs={errs} value={siteId} onChange={setSiteId} hint="Lower-case letters, digits and dashes; used as the site parameter of searches." />
          <TextInput label="Name (optional)" path="name" errs={errs} value={name} onChange={setName} />
          <div class="actions">
            <button type="submit" class="primary">
              Create project
            </button>
          </div>
        </form>
      )}
      <Confirm
        open={deleting !== null}
        title={`Delete project ${deleting ?? ''}?`}
        body={<p>Its pages, settings, keys, crawl queue and query log are removed. This cannot be undone.</p>}
        action="Delete project"
        confirmText={deleting ?? ''}
        onConfirm={() => deleting && remove(deleting)}
        onClose={() => setDeleting(null)}
      />
    </section>
  );
}
