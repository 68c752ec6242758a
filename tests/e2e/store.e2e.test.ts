import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';
import { DB_VERSION } from '../../src/store/schema.ts';
import type { SpindleStoreHook } from '../../src/pipeline/app/debug-hook.ts';
import { makeTrajectory } from '../store/fixtures.ts';

type Hooked = { __spindleStore: SpindleStoreHook };

describe('the store in real Chromium IndexedDB', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('writes, survives a page reload, and reads back', async () => {
    const { page } = app;
    const t = makeTrajectory({ id: 'e2e-1', judge_score: 0.5, group_id: 'e2e-g' });
    await page.waitForFunction(() => '__spindleStore' in globalThis);
    await page.evaluate(async (traj) => {
      const s = (globalThis as unknown as Hooked).__spindleStore;
      await s.putTrajectory(traj);
      await s.setSetting('e2e', { n: 1 });
      await s.saveCheckpoint('run-e2e', 1, [1, 2]);
      await s.saveCheckpoint('run-e2e', 2, [3, 4.5]);
    }, t);
    await page.reload();
    await page.waitForFunction(() => '__spindleStore' in globalThis);
    const back = await page.evaluate(async (id) => {
      const s = (globalThis as unknown as Hooked).__spindleStore;
      return {
        version: await s.version(),
        t: await s.getTrajectory(id),
        setting: await s.getSetting('e2e'),
        stats: await s.stats(),
        ckpt: await s.latestCheckpoint('run-e2e'),
        estimate: await s.estimate(),
      };
    }, t.id);
    expect(back.version).toBe(DB_VERSION);
    expect(back.t).toEqual(t);
    expect(back.setting).toEqual({ n: 1 });
    expect(back.stats).toMatchObject({ count: 1, avg_score: 0.5 });
    expect(back.ckpt).toEqual({ step: 2, values: [3, 4.5] });
    expect(back.estimate!.usage).toBeGreaterThan(0);
    expect(back.estimate!.quota).toBeGreaterThan(back.estimate!.usage);
    expect(app.errors).toEqual([]);
  });
});

describe('the store in real Chromium with a small origin quota', () => {
  let app: App;
  // A page of the origin that runs nothing: Chromium applies a quota override to an origin whose storage it has not opened yet.
  beforeAll(async () => {
    app = await openApp('/nothing-here.txt');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a write past the quota is refused by name and loses nothing stored', async () => {
    const { page } = app;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: app.url, quotaSize: 2 * 1024 * 1024 });
    await page.goto(`${app.url}/`);
    await page.waitForFunction(() => '__spindleStore' in globalThis);
    const kept = makeTrajectory({ id: 'e2e-kept', group_id: 'e2e-q' });
    // Incompressible: Chromium compresses what it stores and charges the quota for what is left.
    const big = makeTrajectory({
      id: 'e2e-big',
      group_id: 'e2e-q',
      final_response: randomBytes(3 * 1024 * 1024).toString('base64'),
    });
    const after = await page.evaluate(
      async ([small, large]) => {
        const s = (globalThis as unknown as Hooked).__spindleStore;
        await s.putTrajectory(small);
        await s.saveCheckpoint('run-q', 1, [1, 2]);
        const error = await s.putTrajectory(large).then(
          () => null,
          (e: Error & { code?: string }) => ({ name: e.name, code: e.code, message: e.message }),
        );
        return {
          error,
          large: await s.getTrajectory(large.id),
          small: await s.getTrajectory(small.id),
          ckpt: await s.latestCheckpoint('run-q'),
        };
      },
      [kept, big] as const,
    );
    expect(after.error).toMatchObject({ name: 'StoreError', code: 'quota' });
    expect(after.error!.message).toMatch(
      /^Browser storage is full: could not save trajectory e2e-big\. Nothing from this save was written .*everything stored before is intact/,
    );
    expect(after.large).toBeUndefined();
    expect(after.small).toEqual(kept);
    expect(after.ckpt).toEqual({ step: 1, values: [1, 2] });
  });
});
