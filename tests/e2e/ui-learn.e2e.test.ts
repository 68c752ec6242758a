/**
 * Learn screen: the example before any run; then, on a store seeded with two runs, picking a run,
 * update and group, moving γ and the group size and seeing the per-turn credit and the group change
 * at once, numbers that reproduce by hand, and a real zero-spread group shown teaching nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { toScoredGroup } from '../../src/rollout/scored-group.ts';
import { DB_VERSION } from '../../src/store/schema.ts';
import { demoChainTrajectory, demoTask } from '../../src/ui/sources/demo-data.ts';
import { openApp, type App } from './harness.ts';

const task = { ...demoTask('arith_tool', 2, 17), split: 'train' as const };

function group(runId: string, id: string, scores: number[]): Trajectory[] {
  return scores.map((s, i) => ({
    ...demoChainTrajectory(i, task),
    id: `${id}-${i}`,
    group_id: id,
    run_id: runId,
    judge_score: s,
    success: s >= 1,
  }));
}

/** Two runs: "chain lesson" (update 2: a group with spread and one where every sample scored 0; update 0: one group) and a newer "other run". */
function seed() {
  const lesson = [
    { step: 2, members: group('run-lesson', 'g-a-spread', [1, 0.1, 0.8, 0, 0.9, 0.2]) },
    { step: 2, members: group('run-lesson', 'g-b-flat', [0, 0, 0, 0]) },
    { step: 0, members: group('run-lesson', 'g-first', [1, 0, 0, 0]) },
  ];
  const other = [{ step: 0, members: group('run-other', 'g-other', [1, 0, 1, 0]) }];
  const run = (id: string, name: string, updated: number, last: number) => ({
    id,
    name,
    config: { ...DEFAULT_CONFIG, name },
    status: 'completed',
    created: updated,
    updated,
    metrics_summary: {},
    last_step: last,
    error: null,
  });
  const groups = [
    ...lesson.map((g) => ({ ...g, run: 'run-lesson' })),
    ...other.map((g) => ({ ...g, run: 'run-other' })),
  ];
  return {
    runs: [run('run-lesson', 'chain lesson', 1000, 2), run('run-other', 'other run', 2000, 0)],
    trajectories: groups.flatMap((g) => g.members.map((t) => ({ ...t, n_steps: t.steps.length }))),
    groups: groups.map((g) => ({
      id: g.members[0].group_id,
      run_id: g.run,
      step: g.step,
      env: 'arith_tool',
      task_id: task.id,
      trajectory_ids: g.members.map((t) => t.id),
      scored: toScoredGroup(g.members),
      created_at: 1000,
    })),
  };
}

const number = (text: string) => Number(text.trim().replace('−', '-').replace('+', ''));
const decimals = (text: string) => (text.trim().split('.')[1] ?? '').length;

describe('learn screen', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#learn');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('walks the example to the advantages, which sum to zero', async () => {
    const { page } = app;
    expect(await page.locator('[data-testid="lesson-source"]').textContent()).toContain('Example numbers');
    for (let i = 0; i < 3; i++) await page.locator('[data-testid="lesson-next"]').click();
    const cells = await page.locator('[data-testid="lesson-advantages"] tbody tr td:last-child').allTextContents();
    const values = cells.map(number);
    expect(values).toHaveLength(4);
    expect(Math.abs(values.reduce((a, b) => a + b, 0))).toBeLessThan(0.01);
    expect(values[0]).toBeGreaterThan(0);
  });

  it('explores a stored run: picks run, update and group, recomputes as γ and the group size move, shows a flat group teaching nothing', async () => {
    const { page } = app;
    // The page opened the store at its current version (the lesson asked it for runs); seed it, then reload.
    await page.waitForFunction(
      async (version) => (await indexedDB.databases()).some((d) => d.name === 'spindle' && d.version === version),
      DB_VERSION,
    );
    await page.evaluate(async (data) => {
      const db = await new Promise<IDBDatabase>((res, rej) => {
        const r = indexedDB.open('spindle');
        r.onsuccess = () => res(r.result);
        r.onerror = () => rej(r.error);
      });
      const tx = db.transaction(['runs', 'trajectories', 'groups'], 'readwrite');
      for (const r of data.runs) tx.objectStore('runs').put(r);
      for (const t of data.trajectories) tx.objectStore('trajectories').put(t);
      for (const g of data.groups) tx.objectStore('groups').put(g);
      await new Promise<void>((res, rej) => {
        tx.oncomplete = () => res();
        tx.onerror = () => rej(tx.error);
      });
      db.close();
    }, seed());
    await page.reload();
    const source = page.locator('[data-testid="lesson-source"]');
    // The most recently active run opens first; the picker lists runs by name.
    await expect.poll(() => source.textContent()).toContain('other run');
    expect(await page.locator('[data-testid="lesson-run"] option').allTextContents()).toEqual([
      'other run',
      'chain lesson',
    ]);
    await page.locator('[data-testid="lesson-run"]').selectOption({ label: 'chain lesson' });
    await expect.poll(() => source.textContent()).toContain('chain lesson, update 2');
    expect(await page.locator('[data-testid="lesson-update"] option').allTextContents()).toEqual(['2', '0']);
    expect(await page.locator('[data-testid="lesson-group"] option').allTextContents()).toEqual([
      expect.not.stringContaining('no spread'),
      expect.stringMatching(/^2 · no spread: /),
    ]);

    // Advantages: each row's formula, worked from the numbers shown, gives the advantage shown.
    await page.getByRole('button', { name: 'Advantages' }).click();
    const rows = page.locator('[data-testid="lesson-advantages"] tbody tr');
    expect(await rows.count()).toBe(6);
    for (const row of await rows.all()) {
      const [x, m, s] = ((await row.locator('td').nth(2).textContent()) ?? '').match(/−?[\d.]+/g)!.map(number);
      const shown = (await row.locator('td').nth(3).textContent())!;
      expect(((x - m) / s).toFixed(decimals(shown))).toBe(number(shown).toFixed(decimals(shown)));
    }

    // Credit per turn: one number on every turn at the run's γ = 1, γ^d of the advantage once γ moves.
    await page.getByRole('button', { name: 'Credit per turn' }).click();
    const credits = () => page.locator('[data-testid="turn-credit"]').allTextContents();
    const atOne = await credits();
    expect(atOne.length).toBeGreaterThan(2);
    expect(new Set(atOne).size).toBe(1);
    await page.locator('[data-testid="knob-gamma"]').fill('0.5');
    await expect.poll(async () => new Set(await credits()).size).toBe(atOne.length);
    const atHalf = (await credits()).map(number);
    atHalf.forEach((c, i) => expect(c).toBeCloseTo(number(atOne[0]) * 0.5 ** (atHalf.length - 1 - i), 2));
    await page.screenshot({ path: 'docs/screenshots/learn.png', fullPage: true });

    // A smaller group drawn from the six stored samples.
    await page.getByRole('button', { name: 'The group' }).click();
    await page.locator('[data-testid="knob-size"]').fill('3');
    await expect.poll(() => page.locator('[data-testid="lesson-answers"] li').count()).toBe(3);
    await page.locator('[data-testid="knob-reset"]').click();
    await expect.poll(() => page.locator('[data-testid="lesson-answers"] li').count()).toBe(6);

    // The update's zero-spread group, reached from the spread step: every advantage and credit 0.
    await page.getByRole('button', { name: 'Mean and spread' }).click();
    await page.locator('[data-testid="lesson-show-flat"]').click();
    await expect
      .poll(() => page.locator('[data-testid="lesson-flat"]').textContent())
      .toContain('This group teaches nothing');
    expect(await page.locator('[data-testid="lesson-std"] strong').textContent()).toBe('0');
    await page.getByRole('button', { name: 'Advantages' }).click();
    expect(
      (await page.locator('[data-testid="lesson-advantages"] tbody tr td:last-child').allTextContents()).map(number),
    ).toEqual([0, 0, 0, 0]);
    await page.getByRole('button', { name: 'Credit per turn' }).click();
    expect((await credits()).map(number).every((c) => c === 0)).toBe(true);
    await expect.poll(() => page.locator('[data-testid="credit-flat"]').count()).toBe(1);

    // Another update of the same run.
    await page.locator('[data-testid="lesson-update"]').selectOption('0');
    await expect.poll(() => source.textContent()).toContain('chain lesson, update 0');
    expect(app.errors).toEqual([]);
  });
});
