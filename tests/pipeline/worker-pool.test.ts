import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkerPool, type WorkerHandle } from '../../src/pipeline/engine/worker-pool.ts';
import { Batcher } from '../../src/pipeline/engine/batcher.ts';

type Job = { id: number; behaviour: 'ok' | 'crash-once' | 'hang-once' | 'always-crash' };

/** In-process fake workers; `seen` records which jobs each worker instance was given. */
function fakeSpawner() {
  const attemptsById = new Map<number, number>();
  let spawned = 0;
  let terminated = 0;
  const spawn = (): WorkerHandle<Job, string> => {
    const instance = spawned++;
    let crash: (e: Error) => void = () => {};
    return {
      async run(job) {
        const attempt = (attemptsById.get(job.id) ?? 0) + 1;
        attemptsById.set(job.id, attempt);
        if (job.behaviour === 'always-crash' || (job.behaviour === 'crash-once' && attempt === 1)) {
          setTimeout(() => crash(new Error('RangeError: Maximum call stack size exceeded')), 5);
          return new Promise<string>(() => {});
        }
        if (job.behaviour === 'hang-once' && attempt === 1) return new Promise<string>(() => {});
        await new Promise((r) => setTimeout(r, 2));
        return `job ${job.id} on worker ${instance}`;
      },
      terminate() {
        terminated++;
      },
      onCrash(cb) {
        crash = cb;
      },
    };
  };
  return { spawn, counts: () => ({ spawned, terminated }), attemptsById };
}

/** The pool's hang deadlines and the fake workers' work run on vitest's fake timers: the test moves the time. */
function onFakeTimers() {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

describe('WorkerPool', () => {
  onFakeTimers();

  it('runs every job exactly once across crashes and hangs', async () => {
    const fake = fakeSpawner();
    const replaced: string[] = [];
    const pool = new WorkerPool(fake.spawn, { size: 2, hangTimeoutMs: 50, maxAttempts: 3 }, (_i, why) =>
      replaced.push(why),
    );
    const jobs: Job[] = Array.from({ length: 8 }, (_, id) => ({
      id,
      behaviour: id === 2 ? 'crash-once' : id === 5 ? 'hang-once' : 'ok',
    }));
    const all = Promise.all(jobs.map((j) => pool.submit(j)));
    await vi.runAllTimersAsync();
    const results = await all;
    expect(results.map((r) => r.split(' on ')[0])).toEqual(jobs.map((j) => `job ${j.id}`));
    expect(fake.attemptsById.get(2)).toBe(2);
    expect(fake.attemptsById.get(5)).toBe(2);
    expect(replaced).toHaveLength(2);
    expect(replaced.some((r) => r.startsWith('crashed'))).toBe(true);
    expect(replaced.some((r) => r.startsWith('hung'))).toBe(true);
    expect(fake.counts()).toEqual({ spawned: 4, terminated: 2 });
    expect(pool.stats()).toMatchObject({ size: 2, busy: 0, queued: 0, restarts: 2 });
    pool.close();
  });

  it('runs several jobs on one worker at once, and re-runs all of them when that worker crashes', async () => {
    const running: number[] = [];
    let peak = 0;
    let crash: (e: Error) => void = () => {};
    let instances = 0;
    const pool = new WorkerPool<Job, string>(
      () => {
        const instance = instances++;
        return {
          async run(job) {
            running.push(job.id);
            peak = Math.max(peak, running.length);
            // The first worker crashes while it holds three jobs.
            if (instance === 0 && running.length === 3) setTimeout(() => crash(new Error('worker died')), 5);
            if (instance === 0) return new Promise<string>(() => {});
            await new Promise((r) => setTimeout(r, 5));
            running.splice(running.indexOf(job.id), 1);
            return `job ${job.id}`;
          },
          terminate() {
            running.length = 0;
          },
          onCrash(cb) {
            crash = cb;
          },
        };
      },
      { size: 1, jobsPerWorker: 3, hangTimeoutMs: 1000, maxAttempts: 2 },
    );
    const all = Promise.all([1, 2, 3, 4].map((id) => pool.submit({ id, behaviour: 'ok' })));
    await vi.runAllTimersAsync();
    const results = await all;
    expect(results).toEqual(['job 1', 'job 2', 'job 3', 'job 4']);
    expect(peak).toBe(3);
    expect(instances).toBe(2);
    pool.close();
  });

  it('gives up on a job that kills every worker, and keeps serving others', async () => {
    const fake = fakeSpawner();
    const pool = new WorkerPool(fake.spawn, { size: 1, hangTimeoutMs: 1000, maxAttempts: 2 });
    const outcomes = Promise.all([
      expect(pool.submit({ id: 1, behaviour: 'always-crash' })).rejects.toThrow(/failed on 2 workers in a row/),
      expect(pool.submit({ id: 2, behaviour: 'ok' })).resolves.toMatch(/^job 2/),
    ]);
    await vi.runAllTimersAsync();
    await outcomes;
    pool.close();
    await expect(pool.submit({ id: 3, behaviour: 'ok' })).rejects.toThrow(/closed/);
  });
});

describe('WorkerPool while its run is paused', () => {
  onFakeTimers();

  it('does not count a paused job as hung: it finishes on its first worker once the pause ends', async () => {
    let paused = true;
    let finish!: (value: string) => void;
    const replaced: string[] = [];
    const pool = new WorkerPool<Job, string>(
      () => ({
        run: () => new Promise<string>((resolve) => (finish = resolve)),
        terminate() {},
        onCrash() {},
      }),
      { size: 1, hangTimeoutMs: 10, maxAttempts: 3, paused: () => paused },
      (_i, why) => replaced.push(why),
    );
    const result = pool.submit({ id: 1, behaviour: 'ok' });
    // Ten hang deadlines pass while paused.
    await vi.advanceTimersByTimeAsync(100);
    expect(replaced).toEqual([]);
    paused = false;
    finish('done');
    await expect(result).resolves.toBe('done');
    expect(pool.stats().restarts).toBe(0);
    pool.close();
  });
});

describe('Batcher', () => {
  it('samples requests that arrive together as one batch, in order', async () => {
    const batcher = new Batcher<number, number>(async (xs) => xs.map((x) => x * 10), { maxBatch: 4, windowMs: 5 });
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((x) => batcher.submit(x)));
    expect(answers).toEqual([10, 20, 30, 40, 50, 60]);
    expect(batcher.batchSizes).toEqual([4, 2]);
  });

  it('rejects every request of a failed batch', async () => {
    const batcher = new Batcher<number, number>(
      async () => {
        throw new Error('device lost');
      },
      { maxBatch: 2, windowMs: 1 },
    );
    await expect(Promise.all([batcher.submit(1), batcher.submit(2)])).rejects.toThrow('device lost');
  });
});
