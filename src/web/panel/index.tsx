/**
 * The Control Panel at `/panel`: a Preact app with hash routes (`#/projects`,
 * `#/p/<siteId>/<page>`), so the key never appears in a URL and every route is one page load.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './panel.css';
import { Api, loadSession, saveSession, type Session } from './api';
import { AnalyticsPage } from './pages/analytics';
import { ContentPage } from './pages/content';
import { CrawlPage } from './pages/crawl';
import { KeysPage } from './pages/keys';
import { PreviewPage } from './pages/preview';
import { ProjectsPage } from './pages/projects';
import { SettingsPage, SETTINGS_PAGES } from './pages/settings';
import { SignIn } from './pages/signin';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** Pages of a project, in the navigation's order. */
const PROJECT_PAGES: Array<[string, string]> = [
  ['crawl', 'Crawl & index'],
  ['content', 'Indexed content'],
  ['analytics', 'Analytics'],
  ['preview', 'Search preview'],
  ['keys', 'API keys'],
  ['settings', 'Settings'],
];

function App() {
  const [session, setSession] = useState<Session | null>(loadSession());
  const hash = useHash();

  function signIn(s: Session) {
    saveSession(s);
    setSession(s);
    location.hash = s.kind === 'master' ? '#/projects' : `#/p/${s.siteId}/crawl`;
  }
  function signOut() {
    saveSession(null);
    setSession(null);
    location.hash = '';
  }

  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  let siteId: string | null = null;
  let pageName = 'projects';
  let sub = '';
  if (parts[0] === 'p' && parts[1]) {
    siteId = parts[1];
    pageName = parts[2] || 'crawl';
    sub = parts[3] || '';
  }
  if (session?.kind === 'project') {
    siteId = session.siteId!;
    if (pageName === 'projects') pageName = 'crawl';
  }

  const title = !session ? 'Sign in' : siteId ? (PROJECT_PAGES.find(([p]) => p === pageName)?.[1] ?? '') : 'Projects';
  useEffect(() => {
    document.title = `${title}${siteId ? ' · ' + siteId : ''} · sitesift`;
  }, [title, siteId]);

  if (!session) return <SignIn onSignIn={signIn} />;

  let main;
  if (!siteId) main = <ProjectsPage session={session} />;
  else {
    const api = new Api(session, siteId);
    switch (pageName) {
      case 'content':
        main = <ContentPage api={api} key={siteId} />;
        break;
      case 'analytics':
        main = <AnalyticsPage api={api} key={siteId} />;
        break;
      case 'preview':
        main = <PreviewPage api={api} key={siteId} />;
        break;
      case 'keys':
        main = <KeysPage api={api} key={siteId} />;
        break;
      case 'settings':
        main = <SettingsPage api={api} section={sub || SETTINGS_PAGES[0]![0]} key={siteId + sub} />;
        break;
      default:
        main = <CrawlPage api={api} key={siteId} />;
    }
  }
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" href={session.kind === 'master' ? '#/projects' : `#/p/${siteId}/crawl`}>
          sitesift <span>Control Panel</span>
        </a>
        <span class="who">{session.kind === 'master' ? 'Signed in with the master key' : `Signed in with a key of ${session.siteId}`}</span>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class="layout">
        {siteId && (
          <nav class="side" aria-label="Project">
            {session.kind === 'master' && (
              <a href="#/projects" class="back">
                ← All projects
              </a>
            )}
            <p class="project-name">{siteId}</p>
            <ul>
              {PROJECT_PAGES.map(([p, label]) => (
                <li key={p}>
                  <a href={`#/p/${encodeURIComponent(siteId!)}/${p}`} aria-current={p === pageName ? 'page' : undefined}>
                    {label}
                  </a>
                  {p === 'settings' && pageName === 'settings' && (
                    <ul>
                      {SETTINGS_PAGES.map(([s, l]) => (
                        <li key={s}>
                          <a href={`#/p/${encodeURIComponent(siteId!)}/settings/${s}`} aria-current={s === (sub || SETTINGS_PAGES[0]![0]) ? 'page' : undefined}>
                            {l}
                          </a>
                        </li>
                      ))}
                    </ul>
                  )}
                </li>
              ))}
            </ul>
          </nav>
        )}
        <main class="main" id="main">
          {main}
        </main>
      </div>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
