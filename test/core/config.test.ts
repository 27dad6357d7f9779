import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { tempDataDir } from '../helpers/server.js';

t.test('defaults', async (t) => {
  const c = loadConfig([], {});
  t.equal(c.host, '127.0.0.1');
  t.equal(c.port, 8080);
  t.equal(c.dataDir, path.resolve('./data'));
  t.equal(c.masterKey, null);
  t.equal(c.role, 'primary');
  t.ok(c.workers >= 1);
  t.equal(c.crawlerAllowPrivate, false);
  t.equal(c.logLevel, 'info');
  t.equal(c.refreshMs, 1000);
  t.equal(c.maxBodyBytes, 10 * 1024 * 1024);
  t.equal(c.primaryUrl, null);
  t.equal(c.memoryMb, 512, 'one memory budget, sized for a 1 GB machine');
  t.equal(c.searchMemoryMb, null, 'engine caches: their share of the budget');
  t.equal(c.searchCacheMb, null, 'answer cache: its share of the budget');
  t.same([c.sitemapMaxDepth, c.sitemapMaxFiles, c.sitemapMaxUrls, c.sitemapMaxMb, c.sitemapTimeoutMs], [2, 1000, 200_000, 50, 300_000], 'sitemap import limits');
  t.ok(Object.isFrozen(c), 'config is frozen');
});

t.test('every setting is read from the environment', async (t) => {
  const c = loadConfig([], {
    HOST: '0.0.0.0',
    PORT: '9000',
    SITESIFT_DATA_DIR: '/tmp/x',
    SITESIFT_MASTER_KEY: 'a-very-long-master-key',
    SITESIFT_ROLE: 'search',
    SITESIFT_SNAPSHOT: 'https://example.com/snap',
    SITESIFT_SNAPSHOT_POLL_MS: '2500',
    SITESIFT_EXPORT_SCHEDULE: '*/5 * * * *',
    SITESIFT_EXPORT_OUT: 'https://static.example.com/export',
    SITESIFT_EXPORT_PRUNE_GRACE_MS: '60000',
    SITESIFT_WORKERS: '3',
    SITESIFT_SEARCH_THREADS: '0',
    SITESIFT_WORKER_NICE: '0',
    SITESIFT_MEMORY_MB: '1024',
    SITESIFT_SEARCH_CACHE_MB: '0',
    SITESIFT_SEARCH_MEMORY_MB: '100',
    SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true',
    SITESIFT_SITEMAP_MAX_DEPTH: '0',
    SITESIFT_SITEMAP_MAX_FILES: '7',
    SITESIFT_SITEMAP_MAX_URLS: '500',
    SITESIFT_SITEMAP_MAX_MB: '3',
    SITESIFT_SITEMAP_TIMEOUT_MS: '60000',
    SITESIFT_LOG_LEVEL: 'debug,crawl=warn,http=silent',
    SITESIFT_LOG_REDACT: 'password,db[*].secret',
    SITESIFT_REFRESH_MS: '200',
    SITESIFT_MAX_BODY_BYTES: '2048',
    SITESIFT_PRIMARY_URL: 'http://primary:8080/',
    SITESIFT_NODE_KEY: 'ssn_node',
    SITESIFT_QUERYLOG_PUSH_MS: '500',
    SITESIFT_OPEN_PROJECTS: '32',
    SITESIFT_RATE_PUBLIC_PER_SECOND: '0',
    SITESIFT_RATE_PUBLIC_BURST: '5',
    SITESIFT_RATE_INDEX_PER_SECOND: '3',
    SITESIFT_RATE_INDEX_BURST: '7',
    SITESIFT_RATE_MAX_CLIENTS: '1000',
    SITESIFT_METRICS_ADDRESS: '[::1]:9464',
    SITESIFT_TEST_PAUSE_IN: 'merge',
    SITESIFT_WORD_VECTORS: '/tmp/wv.bin',
  });
  t.same(
    { ...c },
    {
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/tmp/x',
      masterKey: 'a-very-long-master-key',
      role: 'search',
      snapshot: 'https://example.com/snap',
      snapshotPollMs: 2500,
      exportSchedule: '*/5 * * * *',
      exportOut: 'https://static.example.com/export',
      exportPruneGraceMs: 60000,
      workers: 3,
      searchThreads: 0,
      workerNice: 0,
      memoryMb: 1024,
      searchCacheMb: 0,
      searchMemoryMb: 100,
      crawlerAllowPrivate: true,
      sitemapMaxDepth: 0,
      sitemapMaxFiles: 7,
      sitemapMaxUrls: 500,
      sitemapMaxMb: 3,
      sitemapTimeoutMs: 60000,
      logLevel: 'debug',
      logComponents: { crawl: 'warn', http: 'silent' },
      logRedact: ['password', 'db[*].secret'],
      refreshMs: 200,
      maxBodyBytes: 2048,
      primaryUrl: 'http://primary:8080',
      nodeKey: 'ssn_node',
      queryLogPushMs: 500,
      openProjects: 32,
      ratePublicPerSecond: 0,
      ratePublicBurst: 5,
      rateIndexPerSecond: 3,
      rateIndexBurst: 7,
      rateMaxClients: 1000,
      metricsAddress: { host: '::1', port: 9464 },
      wordVectors: '/tmp/wv.bin',
      testPauseIn: 'merge',
    },
  );
});

t.test('precedence: file < env < flags', async (t) => {
  const dir = tempDataDir(t);
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ PORT: 7000, LOG_LEVEL: 'warn', workers: 5, HOST: 'filehost' }));
  const c = loadConfig(['--port', '7002', '--log-level=error'], { SITESIFT_CONFIG: file, PORT: '7001', LOG_LEVEL: 'debug', SITESIFT_WORKERS: '' });
  t.equal(c.port, 7002, 'flag beats env');
  t.equal(c.logLevel, 'error', '--name=value form');
  t.equal(c.workers, 5, 'file value used when env is empty/absent');
  t.equal(c.host, 'filehost', 'file value (env name key)');
  const c2 = loadConfig([], { SITESIFT_CONFIG: file, PORT: '7001' });
  t.equal(c2.port, 7001, 'env beats file');
  const c3 = loadConfig([`--config=${file}`], {});
  t.equal(c3.port, 7000, '--config names the file');
  const c4 = loadConfig(['--crawler-allow-private'], {});
  t.equal(c4.crawlerAllowPrivate, true, 'boolean flag without value');
});

t.test('invalid values: one line naming the setting', async (t) => {
  const cases: Array<[string[], Record<string, string>, string]> = [
    [[], { PORT: 'abc' }, 'PORT'],
    [[], { PORT: '70000' }, 'PORT'],
    [[], { HOST: 'a b' }, 'HOST'],
    [[], { SITESIFT_ROLE: 'replica' }, 'SITESIFT_ROLE'],
    [[], { SITESIFT_ROLE: 'search' }, 'SITESIFT_SNAPSHOT'],
    [[], { SITESIFT_WORKERS: '0' }, 'SITESIFT_WORKERS'],
    [[], { SITESIFT_WORKERS: '1.5' }, 'SITESIFT_WORKERS'],
    [[], { SITESIFT_CRAWLER_ALLOW_PRIVATE: 'yes' }, 'SITESIFT_CRAWLER_ALLOW_PRIVATE'],
    [[], { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
    [[], { SITESIFT_REFRESH_MS: '-1' }, 'SITESIFT_REFRESH_MS'],
    [[], { SITESIFT_MAX_BODY_BYTES: '10' }, 'SITESIFT_MAX_BODY_BYTES'],
    [[], { SITESIFT_PRIMARY_URL: 'ftp://x' }, 'SITESIFT_PRIMARY_URL'],
    [[], { SITESIFT_MASTER_KEY: 'short' }, 'SITESIFT_MASTER_KEY'],
    [[], { SITESIFT_DATA_DIR: '  ' }, 'SITESIFT_DATA_DIR'],
    [[], { SITESIFT_PORT: '1' }, 'SITESIFT_PORT'],
    [[], { SITESIFT_RATE_PUBLIC_BURST: '0' }, 'SITESIFT_RATE_PUBLIC_BURST'],
    [[], { SITESIFT_RATE_INDEX_PER_SECOND: '-1' }, 'SITESIFT_RATE_INDEX_PER_SECOND'],
    [[], { SITESIFT_METRICS_ADDRESS: 'localhost:70000' }, 'SITESIFT_METRICS_ADDRESS'],
    [[], { SITESIFT_METRICS_ADDRESS: 'http://x:1' }, 'SITESIFT_METRICS_ADDRESS'],
    [['--port', 'x'], {}, '--port'],
    [['--bogus=1'], {}, '--bogus'],
    [['--port'], {}, '--port'],
    [['serve'], {}, 'serve'],
    [[], { SITESIFT_CONFIG: '/nonexistent/sitesift.json' }, 'SITESIFT_CONFIG'],
  ];
  for (const [argv, env, name] of cases) {
    try {
      loadConfig(argv, env);
      t.fail(`expected ${name} to be rejected (${JSON.stringify({ argv, env })})`);
    } catch (err) {
      t.type(err, ConfigError, name);
      const message = (err as Error).message;
      t.match(message, name, `message names ${name}: ${message}`);
      t.notMatch(message, /\n/, 'one line');
    }
  }
});

t.test('config file: unknown key and non-object are rejected', async (t) => {
  const dir = tempDataDir(t);
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ PROT: 1 }));
  t.throws(() => loadConfig([], { SITESIFT_CONFIG: bad }), /PROT/);
  writeFileSync(bad, '[1]');
  t.throws(() => loadConfig([], { SITESIFT_CONFIG: bad }), /SITESIFT_CONFIG/);
  writeFileSync(bad, '{not json');
  t.throws(() => loadConfig([], { SITESIFT_CONFIG: bad }), /SITESIFT_CONFIG/);
  writeFileSync(bad, JSON.stringify({ PORT: 'x' }));
  t.throws(() => loadConfig([], { SITESIFT_CONFIG: bad }), /PORT/);
});

t.test('SITESIFT_URL (CLI) is not an unknown setting', async (t) => {
  t.doesNotThrow(() => loadConfig([], { SITESIFT_URL: 'http://127.0.0.1:1' }));
});
