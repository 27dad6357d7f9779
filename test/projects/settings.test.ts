import t, { type Test } from 'tap';
import { AppError } from '../../src/core/index.js';
import { defaultSettings, normalizeLanguage, validateSettings } from '../../src/projects/settings.js';

function rejects(t: Test, input: unknown, field: string, partial = true): void {
  try {
    validateSettings(input, { partial });
    t.fail(`expected ${field} to be rejected: ${JSON.stringify(input)}`);
  } catch (err) {
    t.type(err, AppError);
    t.equal((err as AppError).code, 'invalid_parameter');
    t.equal((err as AppError).field, field, `field ${field} (${(err as Error).message})`);
  }
}

t.test('defaults', async (t) => {
  const d = defaultSettings();
  t.equal(d.search.language, 'en');
  t.equal(d.search.typoTolerance, 'default');
  t.same(d.search.fieldWeights, { title: 8, keywords: 6, headings: 4, url: 3, content: 1 });
  t.same(d.suggest, { minSearches: 2, typoTolerance: 'default' });
  t.same(d.analytics, { retentionDays: 365 });
  t.equal(d.crawler.maxDepth, 10);
  t.equal(d.crawler.maxPages, 10000);
  t.equal(d.crawler.sitemapSchedule, '0 3 * * *');
  t.equal(d.crawler.respectRobotsTxt, true);
  t.equal(d.crawler.removeMissing, false);
});

t.test('full validation fills sections and fields with defaults', async (t) => {
  const s = validateSettings({ crawler: { rootUrls: ['https://example.com/'] }, search: { language: 'German' } }, { partial: false });
  t.same(s.crawler!.rootUrls, ['https://example.com/']);
  t.equal(s.crawler!.maxDepth, 10, 'missing field of a given section takes its default');
  t.equal(s.search!.language, 'de', 'language name normalised');
  t.same(s.filters, [], 'missing section defaulted');
  const p = validateSettings({ suggest: { minSearches: 5 } }, { partial: true });
  t.same(Object.keys(p), ['suggest'], 'partial returns only given sections');
});

t.test('GET body can be PUT back (status/updatedAt ignored)', async (t) => {
  const d = { status: 'success', ...defaultSettings() };
  t.doesNotThrow(() => validateSettings(d, { partial: false }));
});

t.test('a complete valid object', async (t) => {
  const input = {
    crawler: { sitemapUrls: ['https://example.com/sitemap.xml'], recrawlSchedule: '0 */6 * * *', allowedHosts: ['Example.com'], blacklist: ['/private/'], noIndex: ['\\?print=1$'] },
    contentExtraction: [{ contentGroup: 'Docs', title: 'h1', contentInclude: ['main'], contentExclude: ['nav'], image: 'img.hero' }],
    dataPoints: [{ key: 'price', selector: '.price', type: 'number' }],
    resultGroups: [{ name: 'Blog', urlPattern: '/blog/' }],
    filters: [{ id: 'fid#1', name: 'Price', type: 'range', dataPoint: 'price' }, { id: 'fid#2', name: 'Tag', type: 'multiple' }],
    search: {
      language: 'fr',
      stopWords: ['le'],
      typoTolerance: 'strict',
      fieldWeights: { title: 10 },
      synonyms: [{ terms: ['tv', 'television'] }, { from: 'pg', to: ['postgresql'] }],
      resultMappings: [
        { trigger: { type: 'equals', value: 'pricing' }, action: { type: 'pin', urls: ['https://example.com/pricing'] } },
        { trigger: { type: 'regex', value: '^help' }, action: { type: 'custom', html: '<b>Help</b>', position: 0 } },
        { trigger: { type: 'contains', value: 'jobs' }, action: { type: 'redirect', url: 'https://example.com/careers' } },
      ],
    },
    suggest: { minSearches: 3, typoTolerance: 'off' },
    analytics: { retentionDays: 30 },
  };
  const s = validateSettings(input, { partial: false });
  t.same(s.crawler!.allowedHosts, ['example.com']);
  t.same(s.search!.fieldWeights, { title: 10, keywords: 6, headings: 4, url: 3, content: 1 });
  t.same(s.dataPoints![0], { key: 'price', selector: '.price', type: 'number', show: true, sortable: true, searchable: false });
});

t.test('every kind of invalid value names its path', async (t) => {
  rejects(t, [], 'settings');
  rejects(t, { bogus: 1 }, 'bogus');
  rejects(t, { search: { typoTolerance: 'maybe' } }, 'search.typoTolerance');
  rejects(t, { search: { typoTolerence: 'off' } }, 'search.typoTolerence');
  rejects(t, { search: { language: 'Klingonese' } }, 'search.language');
  rejects(t, { search: { fieldWeights: { title: 0 } } }, 'search.fieldWeights.title');
  rejects(t, { search: { fieldWeights: { body: 1 } } }, 'search.fieldWeights.body');
  rejects(t, { search: { synonyms: [{ terms: ['one'] }] } }, 'search.synonyms[0].terms');
  rejects(t, { search: { synonyms: [{ from: 'a' }] } }, 'search.synonyms[0].to');
  rejects(t, { search: { synonyms: [{ x: 1 }] } }, 'search.synonyms[0]');
  rejects(t, { search: { resultMappings: [{ trigger: { type: 'regex', value: '(' }, action: { type: 'hide', urls: [] } }] } }, 'search.resultMappings[0].trigger.value');
  rejects(t, { search: { resultMappings: [{ trigger: { type: 'equals', value: 'x' }, action: { type: 'pin', urls: ['nope'] } }] } }, 'search.resultMappings[0].action.urls[0]');
  rejects(t, { search: { resultMappings: [{ trigger: { type: 'equals', value: 'x' }, action: { type: 'custom', html: 'x', position: -1 } }] } }, 'search.resultMappings[0].action.position');
  rejects(t, { search: { resultMappings: [{ trigger: { type: 'equals', value: 'x' }, action: { type: 'teleport' } }] } }, 'search.resultMappings[0].action.type');
  rejects(t, { crawler: { maxDepth: -1 } }, 'crawler.maxDepth');
  rejects(t, { crawler: { maxPages: 1.5 } }, 'crawler.maxPages');
  rejects(t, { crawler: { requestDelayMs: '250' } }, 'crawler.requestDelayMs');
  rejects(t, { crawler: { sitemapSchedule: 'every day' } }, 'crawler.sitemapSchedule');
  rejects(t, { crawler: { recrawlSchedule: '61 * * * *' } }, 'crawler.recrawlSchedule');
  rejects(t, { crawler: { blacklist: ['[a-'] } }, 'crawler.blacklist[0]');
  rejects(t, { crawler: { rootUrls: ['ftp://example.com/'] } }, 'crawler.rootUrls[0]');
  rejects(t, { crawler: { respectRobotsTxt: 'yes' } }, 'crawler.respectRobotsTxt');
  rejects(t, { crawler: { allowedHosts: ['bad host'] } }, 'crawler.allowedHosts[0]');
  rejects(t, { filters: [{ id: 'f1', name: 'x', type: 'range' }] }, 'filters[0].id');
  rejects(t, { filters: [{ id: 'fid#1', name: 'x', type: 'range' }, { id: 'fid#1', name: 'y', type: 'multiple' }] }, 'filters[1].id');
  rejects(t, { filters: [{ id: 'fid#1', name: 'x', type: 'slider' }] }, 'filters[0].type');
  rejects(t, { dataPoints: [{ key: 'a', selector: 'x', meta: 'y' }] }, 'dataPoints[0]');
  rejects(t, { dataPoints: [{ key: 'a', type: 'money' }] }, 'dataPoints[0].type');
  rejects(t, { dataPoints: [{ key: 'a' }, { key: 'a' }] }, 'dataPoints[1].key');
  rejects(t, { resultGroups: [{ name: '_' }] }, 'resultGroups[0].name');
  rejects(t, { resultGroups: [{ name: 'x', urlPattern: '(' }] }, 'resultGroups[0].urlPattern');
  rejects(t, { contentExtraction: [{ title: 5 }] }, 'contentExtraction[0].title');
  rejects(t, { suggest: { minSearches: 0 } }, 'suggest.minSearches');
  rejects(t, { analytics: { retentionDays: 0 } }, 'analytics.retentionDays');
  rejects(t, { crawler: [] }, 'crawler');
});

t.test('range messages state the allowed range', async (t) => {
  t.throws(() => validateSettings({ crawler: { maxDepth: 5000 } }, { partial: true }), { message: /between 0 and 1000/ });
});

t.test('normalizeLanguage', async (t) => {
  t.equal(normalizeLanguage('EN'), 'en');
  t.equal(normalizeLanguage('de-AT'), 'de');
  t.equal(normalizeLanguage('french'), 'fr');
  t.equal(normalizeLanguage('xx'), null);
  t.equal(normalizeLanguage('Elvish'), null);
});

t.test('search.stopWordAdditions: per language, keyed by code or name', async (t) => {
  const s = validateSettings({ search: { stopWordAdditions: { German: ['bzw'], fr: ['voici'] } } }, { partial: true });
  t.same(s.search?.stopWordAdditions, { de: ['bzw'], fr: ['voici'] });
  t.same(defaultSettings().search.stopWordAdditions, {});
  rejects(t, { search: { stopWordAdditions: { klingon: ['x'] } } }, 'search.stopWordAdditions.klingon');
  rejects(t, { search: { stopWordAdditions: { de: 'bzw' } } }, 'search.stopWordAdditions.de');
});
