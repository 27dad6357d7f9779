import t from 'tap';
import { bucketCount, bucketStart, defaultInterval, nextBucket } from '../../src/analytics/timechart.js';

process.env.TZ = 'America/St_Johns'; // -03:30: local-time math would shift every bucket

const H = 3_600_000;
const D = 24 * H;

t.test('bucket starts are UTC hours, days, Monday weeks and months', async (t) => {
  const ms = Date.UTC(2024, 1, 29, 23, 59, 59, 999); // leap day, Thursday
  t.equal(bucketStart(ms, 'hour'), Date.UTC(2024, 1, 29, 23));
  t.equal(bucketStart(ms, 'day'), Date.UTC(2024, 1, 29));
  t.equal(bucketStart(ms, 'week'), Date.UTC(2024, 1, 26), 'Monday');
  t.equal(bucketStart(ms, 'month'), Date.UTC(2024, 1, 1));
  t.equal(bucketStart(Date.UTC(2024, 2, 4), 'week'), Date.UTC(2024, 2, 4), 'a Monday starts its own week');
  t.equal(bucketStart(Date.UTC(2024, 2, 3, 23), 'week'), Date.UTC(2024, 1, 26), 'Sunday belongs to the previous Monday');
  t.equal(bucketStart(0, 'week'), Date.UTC(1969, 11, 29), 'the epoch (a Thursday) is in the week of Monday 1969-12-29');
  t.equal(nextBucket(Date.UTC(2024, 0, 1), 'month'), Date.UTC(2024, 1, 1));
  t.equal(nextBucket(Date.UTC(2024, 11, 1), 'month'), Date.UTC(2025, 0, 1));
  t.equal(nextBucket(Date.UTC(2024, 1, 26), 'week'), Date.UTC(2024, 2, 4));
});

t.test('bucket counts include partial buckets at both ends', async (t) => {
  const s = Date.UTC(2024, 0, 1, 10, 30);
  t.equal(bucketCount(s, s + H, 'hour'), 2);
  t.equal(bucketCount(s - 30 * 60_000, s + 30 * 60_000, 'hour'), 1, 'aligned end is exclusive');
  t.equal(bucketCount(s, s + 2 * D, 'day'), 3);
  t.equal(bucketCount(Date.UTC(2024, 0, 1), Date.UTC(2025, 0, 1), 'day'), 366);
  t.equal(bucketCount(Date.UTC(2024, 0, 15), Date.UTC(2024, 2, 1), 'month'), 2);
  t.equal(bucketCount(Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 8), 'week'), 1);
});

t.test('default interval: hour up to 2 days, day beyond', async (t) => {
  t.equal(defaultInterval(0, 2 * 86400), 'hour');
  t.equal(defaultInterval(0, 2 * 86400 + 1), 'day');
});
