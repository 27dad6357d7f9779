/**
 * The Control Panel in chromium, part 1: sign in (master key, project key; kept in
 * sessionStorage, sent as a Bearer header, never in a URL), projects (create with its key
 * shown once, delete after typing its ID), API keys (generate — token shown once with a copy
 * button —, last used, rename, delete), and settings editors showing the API's validation
 * message at the field it names.
 */
import t from 'tap';
import { launchBrowser, waitFor } from '../helpers/browser.js';
import { api, startTestServer } from '../helpers/server.js';

t.test('sign in, projects, keys, settings with field errors', async (t) => {
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0' } });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const requests: Array<{ url: string; auth?: string; cookie?: string }> = [];
  page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers()['authorization'], cookie: r.headers()['cookie'] }));
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));

  // Sign in: a wrong key is refused at the field, the master key opens the projects.
  await page.goto(srv.url + '/panel');
  const keyInput = page.getByLabel('Master key or project API key');
  await keyInput.fill('ss_wrong-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('This key is not valid on this server.').waitFor();
  t.equal(await keyInput.getAttribute('aria-invalid'), 'true', 'the refusal is at the key field');
  await keyInput.fill(srv.masterKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  t.ok(await page.getByRole('link', { name: 'default' }).count(), 'the default project is listed');
  t.equal(await page.evaluate(() => JSON.parse(sessionStorage.getItem('sitesift.panel.session') ?? '{}').kind), 'master', 'the session is in sessionStorage');
  t.equal(await page.evaluate(() => document.cookie), '', 'no cookies');

  // A project: created with its first key shown once, then deleted after typing its ID.
  await page.getByLabel('Site ID').fill('Bad ID');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.locator('[data-field="siteId"] .field-error').waitFor();
  t.equal(await page.getByLabel('Site ID').getAttribute('aria-invalid'), 'true', 'an invalid site ID is shown at its field');
  await page.getByLabel('Site ID').fill('shop');
  await page.getByLabel('Name (optional)').fill('The shop');
  await page.getByRole('button', { name: 'Create project' }).click();
  const firstKey = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
  t.match(firstKey, /^ss_/, "the new project's key is shown");
  t.equal((await api(srv.url, `/sites/indexStatus?token=${firstKey}`)).status, 200, 'and it works');
  await page.getByRole('button', { name: 'I have stored it' }).click();
  t.equal(await page.getByRole('textbox', { name: 'New API key' }).count(), 0, 'then it is gone');
  await page.getByRole('button', { name: 'Delete project shop' }).click();
  const dialog = page.getByRole('dialog');
  const confirm = dialog.getByRole('button', { name: 'Delete project' });
  t.ok(await confirm.isDisabled(), 'deleting needs the ID typed');
  await dialog.getByLabel('Type shop to confirm').fill('shop');
  await confirm.click();
  await page.getByText('Project shop and all its data were deleted.').waitFor();
  t.notOk(srv.services.projects.hasProject('shop'), 'the project is gone');

  // API keys of default: generate one, see it once, see it used, rename, delete.
  await page.getByRole('link', { name: 'default' }).click();
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await page.getByLabel('Label').fill('ci importer');
  await page.getByRole('button', { name: 'Generate key' }).click();
  const tokenBox = page.getByRole('textbox', { name: 'New API key' });
  const token = await tokenBox.inputValue();
  t.match(token, /^ss_\S{20,}$/, 'the token is shown');
  t.ok(await page.getByRole('button', { name: 'Copy' }).count(), 'with a copy button');
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), token, 'Copy puts it on the clipboard');
  const row = page.getByRole('row', { name: /ci importer/ });
  await row.waitFor();
  t.match(await row.textContent(), /never/, 'not used yet');
  await page.reload();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await row.waitFor();
  t.notOk((await page.content()).includes(token), 'after a reload the token is nowhere on the page');
  t.ok((await row.textContent())!.includes(token.slice(0, 8)), 'the list shows its prefix');
  t.equal((await api(srv.url, `/sites/indexStatus?token=${token}`)).status, 200);
  await page.reload();
  await waitFor(async () => !/never/.test((await row.textContent()) ?? ''), 'last used shown');
  t.pass('last used is shown once the key was used');
  await page.getByRole('button', { name: 'Rename key ci importer' }).click();
  await row.getByRole('textbox', { name: 'Label' }).fill('ci');
  await row.getByRole('button', { name: 'Save' }).click();
  const renamed = page.getByRole('row', { name: /^ci\b/ });
  await page.getByRole('button', { name: 'Delete key ci' }).waitFor();
  t.ok(await renamed.count(), 'renamed');
  await page.getByRole('button', { name: 'Delete key ci' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete key' }).click();
  await page.getByText(/was deleted; requests with it now fail/).waitFor();
  t.equal((await api(srv.url, `/sites/indexStatus?token=${token}`)).status, 401, 'the deleted key fails at once');

  // Settings: the API's validation message at the field its path names.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Crawler rules' }).waitFor();
  const depth = page.getByLabel('Maximum depth');
  await depth.fill('5000');
  await page.getByRole('button', { name: 'Save' }).click();
  const depthError = page.locator('[data-field="crawler.maxDepth"] .field-error');
  await depthError.waitFor();
  t.equal(await depthError.textContent(), 'must be an integer between 0 and 1000', 'the message is at Maximum depth');
  t.equal(await depth.getAttribute('aria-invalid'), 'true');
  t.match(await depth.getAttribute('aria-describedby'), await depthError.getAttribute('id'), 'and described by it');
  t.match(await page.getByRole('alert').first().textContent(), /Not saved: crawler\.maxDepth/, 'and summarised above the form');
  t.equal(srv.services.projects.getSettings('default').crawler.maxDepth, 10, 'nothing was saved');
  await depth.fill('3');
  await page.getByLabel('Blacklist (never fetch)').fill('/private/\n([unclosed');
  await page.getByRole('button', { name: 'Save' }).click();
  const listError = page.locator('[data-field="crawler.blacklist"] .field-error');
  await listError.waitFor();
  t.match(await listError.textContent(), /^Line 2: /, 'a bad line of a list is named at the list');
  t.equal(await page.locator('[data-field="crawler.maxDepth"] .field-error').count(), 0, 'the fixed field is clear');
  await page.getByLabel('Blacklist (never fetch)').fill('/private/');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/^Saved/).waitFor();
  t.equal(srv.services.projects.getSettings('default').crawler.maxDepth, 3, 'saved');
  t.same(srv.services.projects.getSettings('default').crawler.blacklist, ['/private/']);

  // A row editor: a data point without a key is refused at that row's Key field.
  await page.getByRole('link', { name: 'Data points' }).click();
  await page.getByRole('button', { name: 'Add data point' }).click();
  await page.getByRole('button', { name: 'Save' }).click();
  const keyError = page.locator('[data-field="dataPoints[0].key"] .field-error');
  await keyError.waitFor();
  t.ok((await keyError.textContent())!.length > 0, `row field error: ${await keyError.textContent()}`);
  await page.getByRole('group', { name: 'Data point 1' }).getByLabel('Key').fill('price');
  await page.getByRole('group', { name: 'Data point 1' }).getByLabel('Selector').fill('.price');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/^Saved/).waitFor();
  t.match(srv.services.projects.getSettings('default').dataPoints, [{ key: 'price', selector: '.price', type: 'text' }]);

  // Typo tolerance and synonyms round-trip through their editors.
  await page.getByRole('link', { name: 'Typo tolerance' }).click();
  await page.getByLabel('Search', { exact: true }).selectOption('strict');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/^Saved/).waitFor();
  t.equal(srv.services.projects.getSettings('default').search.typoTolerance, 'strict');
  await page.getByRole('link', { name: 'Synonyms' }).click();
  await page.getByRole('button', { name: 'Add synonym' }).click();
  await page.getByLabel('Words (comma-separated)').fill('tv');
  await page.getByRole('button', { name: 'Save' }).click();
  const synError = page.locator('[data-field="search.synonyms[0].terms"] .field-error');
  await synError.waitFor();
  t.match(await synError.textContent(), /at least 2/, 'synonym rule error at its field');
  await page.getByLabel('Words (comma-separated)').fill('tv, television');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/^Saved/).waitFor();
  t.same(srv.services.projects.getSettings('default').search.synonyms, [{ terms: ['tv', 'television'] }]);

  // The other row editors: each API message at the row field it names, then a clean save.
  const rowCase = async (link: string, add: string, fill: () => Promise<void>, path: string, message: RegExp, fix: () => Promise<void>) => {
    await page.getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('button', { name: add }).click();
    await fill();
    await page.getByRole('button', { name: 'Save' }).click();
    const err = page.locator(`[data-field="${path}"] .field-error`);
    await err.waitFor();
    t.match(await err.textContent(), message, `${link}: the message at ${path}`);
    await fix();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved/).waitFor();
  };
  await rowCase(
    'Content extraction',
    'Add rule',
    () => page.getByLabel('Content group (empty: all pages)').fill('g'.repeat(201)),
    'contentExtraction[0].contentGroup',
    /at most 200/,
    async () => {
      await page.getByLabel('Content group (empty: all pages)').fill('Blog');
      await page.getByLabel('Title selector').fill('h1.title');
    },
  );
  t.same(srv.services.projects.getSettings('default').contentExtraction, [{ contentGroup: 'Blog', title: 'h1.title' }]);
  await rowCase(
    'Result groups',
    'Add group',
    () => page.getByLabel('Name').fill('_'),
    'resultGroups[0].name',
    /reserved/,
    async () => {
      await page.getByLabel('Name').fill('Blog');
      await page.getByLabel('URL pattern').fill('/blog/');
    },
  );
  t.same(srv.services.projects.getSettings('default').resultGroups, [{ name: 'Blog', urlPattern: '/blog/' }]);
  await rowCase(
    'Filters',
    'Add filter',
    () => page.getByLabel('Filter ID').fill('colour'),
    'filters[0].id',
    /fid#/,
    async () => {
      await page.getByLabel('Filter ID').fill('fid#1');
      await page.getByLabel('Name', { exact: true }).fill('Colour');
    },
  );
  t.same(srv.services.projects.getSettings('default').filters, [{ id: 'fid#1', name: 'Colour', type: 'multiple' }]);
  await rowCase(
    'Result mappings',
    'Add mapping',
    async () => {
      await page.getByLabel('Query text').fill('shipping');
      await page.getByLabel('Page URLs').fill('not a url');
    },
    'search.resultMappings[0].action.urls',
    /^Line 1: must be an absolute http\(s\) URL/,
    () => page.getByLabel('Page URLs').fill('https://shop.example/shipping'),
  );
  t.same(srv.services.projects.getSettings('default').search.resultMappings, [{ trigger: { type: 'equals', value: 'shipping' }, action: { type: 'pin', urls: ['https://shop.example/shipping'] } }]);

  // The key only ever travelled in the Authorization header.
  const apiCalls = requests.filter((r) => new URL(r.url).pathname.startsWith('/admin') || new URL(r.url).pathname.startsWith('/sites'));
  t.ok(apiCalls.length > 10, `${apiCalls.length} API calls`);
  t.ok(apiCalls.every((r) => !r.url.includes(srv.masterKey) && !r.url.includes('token=')), 'no key in any URL');
  const adminCalls = apiCalls.filter((r) => new URL(r.url).pathname.startsWith('/admin'));
  t.ok(adminCalls.every((r) => r.auth?.startsWith('Bearer ')), 'admin calls carry a Bearer header');
  t.ok(adminCalls.filter((r) => r.auth === `Bearer ${srv.masterKey}`).length > 5, 'the master key in the header');
  t.ok(requests.every((r) => !r.cookie), 'no cookies sent');
  t.same(problems, [], 'no script or CSP errors');

  // A project key: straight to its project, no projects list; sign out forgets it.
  await page.getByRole('button', { name: 'Sign out' }).click();
  t.equal(await page.evaluate(() => sessionStorage.getItem('sitesift.panel.session')), null, 'signed out');
  await page.getByLabel('Master key or project API key').fill(srv.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Crawl & index' }).waitFor();
  t.match(await page.getByText(/Signed in with a key of default/).textContent(), /default/);
  t.equal(await page.getByRole('link', { name: '← All projects' }).count(), 0, 'a project key sees only its project');
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('row', { name: /this session/ }).waitFor();
  t.pass('a project key manages its own keys');
});
