/**
 * Crash consistency in the browser: a short GRPO run in the built app, with the real
 * IndexedDB store, is cut off by a page reload at 22 moments — start-up (the new run just stored,
 * the model loading, the running status half written and written), the held-out evaluations,
 * rollouts, updates, checkpoint writes (the staged record half written, staged but not committed, the
 * head flip half written or clearing a leftover, the head committed), the completed status half
 * written and written — and resumed after each reload the way a user does, with the Train screen's
 * Resume offer, which must name the stored head checkpoint every time, never one before the last the
 * engine saw committed. Then nothing is lost or done twice: metrics of updates 1..N once each, one
 * checkpoint per update and the head at N, exactly the trajectories and groups of N updates and of the
 * evaluations at 0, 2, 4 and 6, every trained group scored with its advantages, each evaluation once,
 * no staged checkpoint, unscored group or half-started run left in IndexedDB, the run completed and
 * not offered again.
 *
 * The moments are chosen by events, not clocks: a hook evaluated into each engine worker (the one
 * that owns the run and its store connection) tells every IndexedDB write it issues and commits,
 * every fetch and every episode it hands to a rollout worker on a BroadcastChannel, and freezes the
 * worker (a busy loop) at the moment the plan names, where the test reloads the page; the reload
 * terminates the frozen worker, and IndexedDB aborts whatever transaction it had not committed. A
 * few moments land a fixed delay after such an event (an episode or update under way). The hook
 * only observes until it freezes, but at one moment, where it holds update 3's metrics write open for
 * a while (as a slow disk would) to see that the checkpoint after it cannot commit first.
 *
 * What it found: a run reloaded before its loop had begun stayed 'created', was never offered, and
 * its config was gone from the form (a new run is now stored running, and the engine takes its tab
 * lock from its first event); a checkpoint head could commit before the metrics of its update, and a
 * reload between them lost those metrics for good (the head flip now waits for them).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from 'playwright-core';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { openApp, type App } from './harness.ts';

const MODEL_DIR = 'dist/e2e-crash-model';
const STEPS = 6;
const EVAL_STEPS = [0, 2, 4, 6];
const GROUP_SIZE = 2;

const RUN_YAML = `name: e2e-crash
seed: 5
model:
  base_model: /e2e-crash-model
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj, v_proj]
training:
  max_steps: ${STEPS}
  batch_size: 1
  group_size: ${GROUP_SIZE}
  eval_interval: 2
  eval_at_start: true
  checkpoint_every: 1
sampling:
  max_new_tokens: 8
safety:
  enabled: false
trajectory_collection:
  n_workers: 1
  max_steps_per_trajectory: 1
tasks:
  environments: [arith_tool]
  eval_items: 1
`;

type Phase = 'start-up' | 'evaluation' | 'rollout' | 'update' | 'checkpoint write' | 'completion';

/**
 * One reload: when the engine worker issues a write (`op`; the label lists the transaction's writes so
 * far) or commits a transaction (`commit`) whose label matches, fetches a matching URL (`fetch`), or
 * hands a rollout worker an episode whose id matches (`sent`); or `delayMs` after that. Labels:
 * `<store> <put|add|delete> <what>`, `; `-joined (hook below); ids lose their run prefix.
 */
interface Moment {
  phase: Phase;
  at: 'op' | 'commit' | 'sent' | 'fetch';
  match: string;
  delayMs?: number;
  /** Writes to hold open for a while first (a slow transaction), so that later ones may overtake them. */
  slow?: string;
}

const m = (phase: Phase, at: Moment['at'], match: string, delayMs?: number, slow?: string): Moment => ({
  phase,
  at,
  match,
  delayMs,
  slow,
});

/**
 * In run order. Each page's engine freezes at the first of the moments still to come that it meets, so
 * one that a run gets past (a delay that outlasted the next write) is skipped and counted as missed.
 */
const MOMENTS: Moment[] = [
  m('start-up', 'commit', '^runs add '), // the new run stored, nothing else: before any update
  m('start-up', 'fetch', 'e2e-crash-model/'), // the engine loading the model
  m('start-up', 'op', '^runs put status=running'), // the running status half written
  m('start-up', 'commit', '^runs put status=running'), // the run's loop started, its baseline evaluation owed
  m('evaluation', 'sent', '^eval/0/'), // the baseline evaluation's episode handed out
  m('rollout', 'sent', '^0/0/1$'),
  m('update', 'commit', '^groups put 0/0 step=0 scored'), // the group stored and scored; the update computing
  m('checkpoint write', 'op', '^checkpoints add step=1'), // the staged record half written
  m('update', 'commit', '^metrics put step=1'), // the update's metrics stored, its checkpoint staged, not committed
  m('checkpoint write', 'op', '^checkpoint_heads put step=1'), // the head flip half written
  m('rollout', 'sent', '^1/0/0$', 10), // an episode under way
  m('update', 'commit', '^groups put 1/0 step=1 scored', 5), // an update under way
  m('checkpoint write', 'commit', '^checkpoint_heads put step=2'), // checkpoint 2 committed, its evaluation owed
  m('evaluation', 'sent', '^eval/2/', 30), // the evaluation's episode under way
  // Update 3's metrics written slowly: the checkpoint taken after them must not get ahead of them.
  m('checkpoint write', 'commit', '^checkpoint_heads put step=3', undefined, '^metrics put step=3'),
  m('rollout', 'commit', 'trajectories put 3/0/'), // update 4's group stored, not yet scored
  m('checkpoint write', 'commit', '^checkpoints add step=4'), // staged, not committed: stored alone
  m('checkpoint write', 'op', '^checkpoint_heads put step=4; checkpoints delete'), // the redone update's head flip clearing that leftover
  m('evaluation', 'commit', 'trajectories put eval/4/'), // its episode stored, its result not
  m('evaluation', 'sent', '^eval/6/'), // the last evaluation, after the last checkpoint
  m('completion', 'op', '^runs put status=completed'), // the completed status half written
  m('completion', 'commit', '^runs put status=completed'), // completed; the page goes before it says so
];

/**
 * Evaluated into the engine worker: wraps IndexedDB's write calls, fetch and postMessage to tell each
 * write, commit, fetch and episode handed out on a BroadcastChannel, and freezes at the first of `plans`
 * (the moments still to come, with their `index`) that it meets.
 */
const HOOK = String.raw`(plans) => {
  const g = globalThis;
  if (g.__crashHook) { g.__crashHook.plans = plans; return; }
  const channel = new BroadcastChannel('spindle-crash-e2e');
  const hook = { plans, frozen: false };
  g.__crashHook = hook;
  const local = (id) => { const s = String(id); const i = s.indexOf('/'); return i < 0 ? s : s.slice(i + 1); };
  const ckptStep = (id) => String(id).split('-').at(-3);
  const describe = (store, verb, value) => {
    if (verb === 'delete') return store + ' delete';
    const v = value || {};
    switch (store) {
      case 'runs': return 'runs ' + verb + ' status=' + v.status + ' last_step=' + v.last_step;
      case 'trajectories': return 'trajectories put ' + local(v.id);
      case 'groups': return 'groups put ' + local(v.id) + ' step=' + v.step + ' ' + (v.scored ? (v.scored.advantages ? 'advantages' : 'scored') : 'unscored');
      case 'metrics': return 'metrics put step=' + v.step;
      case 'checkpoints': return 'checkpoints add step=' + v.step;
      case 'checkpoint_heads': return 'checkpoint_heads put step=' + ckptStep(v.latest);
      case 'evaluations': return 'evaluations put step=' + v.step;
      default: return store + ' ' + verb;
    }
  };
  const freeze = (label, index) => {
    hook.frozen = true;
    channel.postMessage({ kind: 'frozen', label, index });
    const end = Date.now() + 60000;
    while (Date.now() < end) { /* frozen until the page reloads */ }
  };
  const at = (kind, label) => {
    channel.postMessage({ kind, label });
    const p = hook.plans.find((x) => x.at === kind && new RegExp(x.match).test(label));
    if (!p || hook.frozen) return;
    hook.plans = [];
    if (p.delayMs === undefined || p.delayMs === null) freeze(label, p.index);
    else setTimeout(() => freeze(label + ' +' + p.delayMs + 'ms', p.index), p.delayMs);
  };
  const ops = new WeakMap();
  const slowed = new WeakSet();
  // A transaction stays open while it has requests pending: one count after another, until the deadline.
  const hold = (store, until) => { const r = store.count(); r.onsuccess = () => { if (Date.now() < until) hold(store, until); }; };
  const transaction = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (stores, mode, options) {
    const tx = transaction.call(this, stores, mode, options);
    if (mode === 'readwrite') {
      ops.set(tx, []);
      tx.addEventListener('complete', () => { const done = ops.get(tx); if (done.length) at('commit', done.join('; ')); });
    }
    return tx;
  };
  for (const verb of ['put', 'add', 'delete']) {
    const original = IDBObjectStore.prototype[verb];
    IDBObjectStore.prototype[verb] = function (...args) {
      const request = original.apply(this, args);
      const list = ops.get(this.transaction);
      if (list) {
        list.push(describe(this.name, verb, args[0]));
        const label = list.join('; '); // the transaction's writes so far
        if (!slowed.has(this.transaction) && hook.plans.some((x) => x.slow && new RegExp(x.slow).test(label))) {
          slowed.add(this.transaction);
          hold(this, Date.now() + 600);
        }
        at('op', label);
      }
      return request;
    };
  }
  const findJob = (message, depth) => {
    if (!message || typeof message !== 'object' || depth > 4) return null;
    if (typeof message.trajectory_id === 'string') return message.trajectory_id;
    for (const value of Array.isArray(message) ? message : Object.values(message)) {
      const found = findJob(value, depth + 1);
      if (found) return found;
    }
    return null;
  };
  const fetch = g.fetch;
  g.fetch = function (input, ...rest) {
    at('fetch', String(input && input.url ? input.url : input).replace(/^[a-z]+:[/][/][^/]+/, ''));
    return fetch.call(this, input, ...rest);
  };
  for (const Target of [Worker, MessagePort]) {
    const post = Target.prototype.postMessage;
    Target.prototype.postMessage = function (message, ...rest) {
      const job = findJob(message, 0);
      const result = post.call(this, message, ...rest);
      if (job) at('sent', local(job));
      return result;
    };
  }
}`;

/** Each page collects what the hook says (an init script, so it is there again after every reload). */
const COLLECT = `globalThis.__crashLog = []; new BroadcastChannel('spindle-crash-e2e').onmessage = (e) => globalThis.__crashLog.push(e.data);`;

interface LogEntry {
  kind: 'op' | 'commit' | 'sent' | 'fetch' | 'frozen';
  label: string;
  index?: number;
}

async function writeTinyModel(): Promise<void> {
  await initBackend({ forced: 'wasm' });
  const model = TransformerModel.create(
    presetConfig('nano', 266, {
      numLayers: 1,
      hiddenSize: 32,
      intermediateSize: 64,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 16,
    }),
    13,
  );
  mkdirSync(MODEL_DIR, { recursive: true });
  for (const [name, bytes] of await saveModel(model, new ByteTokenizer())) writeFileSync(`${MODEL_DIR}/${name}`, bytes);
  model.dispose();
}

/** What IndexedDB holds, read with the raw API (payloads left out). */
interface Stored {
  runs: { id: string; status: string; last_step: number }[];
  metrics: { run_id: string; step: number }[];
  checkpoints: { id: string; run_id: string; step: number }[];
  heads: { run_id: string; latest: string; previous: string | null }[];
  trajectories: { id: string; run_id: string; group_id: string; split: string }[];
  groups: {
    id: string;
    run_id: string;
    step: number;
    scored: boolean;
    advantages: boolean;
    trajectory_ids: string[];
  }[];
  evaluations: { run_id: string; step: number; benchmark: string }[];
  markers: unknown[];
}

const READ_STORE = `(async () => {
  const db = await new Promise((resolve, reject) => { const r = indexedDB.open('spindle'); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
  const all = (name) => new Promise((resolve, reject) => { const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
  const out = {
    runs: (await all('runs')).map((r) => ({ id: r.id, status: r.status, last_step: r.last_step })),
    metrics: (await all('metrics')).map((r) => ({ run_id: r.run_id, step: r.step })),
    checkpoints: (await all('checkpoints')).map((r) => ({ id: r.id, run_id: r.run_id, step: r.step })),
    heads: (await all('checkpoint_heads')).map((r) => ({ run_id: r.run_id, latest: r.latest, previous: r.previous })),
    trajectories: (await all('trajectories')).map((r) => ({ id: r.id, run_id: r.run_id, group_id: r.group_id, split: r.split })),
    groups: (await all('groups')).map((r) => ({ id: r.id, run_id: r.run_id, step: r.step, scored: !!r.scored, advantages: !!(r.scored && r.scored.advantages), trajectory_ids: r.trajectory_ids })),
    evaluations: (await all('evaluations')).map((r) => ({ run_id: r.run_id, step: r.step, benchmark: r.benchmark })),
    markers: await all('markers'),
  };
  db.close();
  return out;
})()`;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('a training run in the browser reloaded at many moments', () => {
  let app: App;
  beforeAll(async () => {
    await writeTinyModel();
    app = await openApp('/?backend=wasm#train');
    await app.page.addInitScript(COLLECT);
    await app.page.reload();
  });
  afterAll(async () => {
    await app?.close();
    rmSync(MODEL_DIR, { recursive: true, force: true });
  });

  it('resumes after every reload to a complete run with nothing lost, duplicated or left half-written', async () => {
    const { page } = app;
    const started = performance.now();
    const status = page.locator('[data-testid="run-status"]');
    const offer = page.locator('[data-testid="interrupted-run"]');
    const log = () => page.evaluate(() => (globalThis as unknown as { __crashLog: LogEntry[] }).__crashLog);
    const readStore = () => page.evaluate(READ_STORE) as Promise<Stored>;

    /** The page's engine worker, with the hook planned for the moments from `next` on. */
    const arm = async (next: number): Promise<void> => {
      let engine: Worker | undefined;
      await expect
        .poll(() => (engine = page.workers().find((w) => /engine\.worker/.test(w.url()))), { timeout: 20_000 })
        .toBeTruthy();
      await engine!.evaluate(
        `(${HOOK})(${JSON.stringify(MOMENTS.slice(next).map((x, k) => ({ ...x, index: next + k })))})`,
      );
    };

    const landed: Phase[] = [];
    const missed: Moment[] = [];
    /** The step of the last checkpoint head the engine saw committed: Resume must not continue before it. */
    let committedHead: number | null = null;
    let runId: string | null = null;
    let completed = false;

    for (let next = 0, reloads = 0; next < MOMENTS.length; reloads++) {
      await arm(next);
      if (reloads === 0) {
        await page.locator('[data-testid="yaml-view"]').click();
        await page.locator('[data-testid="yaml-editor"]').fill(RUN_YAML);
        await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
        await page.locator('[data-testid="start-run"]').click();
      } else {
        // The user comes back to an interrupted run: the Resume offer names where it continues, the
        // checkpoint the store's head points at, never one before the last the engine saw committed
        // (a commit can reach the disk without the frozen engine hearing of it).
        await offer.waitFor({ timeout: 20_000 });
        const text = (await offer.textContent()) ?? '';
        expect(await offer.getAttribute('data-run-id')).toBe(runId);
        const stored = await readStore();
        const head = stored.heads.find((h) => h.run_id === runId);
        const headStep = head ? stored.checkpoints.find((c) => c.id === head.latest)!.step : null;
        expect(headStep ?? -1, `reload ${reloads}`).toBeGreaterThanOrEqual(committedHead ?? -1);
        if (headStep === null) expect(text, `reload ${reloads}`).toContain('no update had finished');
        else
          expect(Number(/continues after update (\d+)/.exec(text)?.[1]), `reload ${reloads}: ${text}`).toBe(headStep);
        await offer.locator('[data-testid="resume-interrupted"]').click();
      }
      // Wait for a moment (the hook froze the engine), or the run to finish without one.
      await expect
        .poll(
          async () => (await log()).some((e) => e.kind === 'frozen') || (await status.textContent()) === 'finished',
          { timeout: 60_000, interval: 20 },
        )
        .toBe(true);
      const entries = await log();
      const commits = entries.filter((e) => e.kind === 'commit').map((e) => e.label);
      for (const c of commits) {
        const head = /checkpoint_heads put step=(\d+)/.exec(c);
        if (head) committedHead = Number(head[1]);
      }
      const frozen = entries.find((e) => e.kind === 'frozen');
      if (!frozen) {
        // The run finished past every moment left.
        missed.push(...MOMENTS.slice(next));
        completed = true;
        break;
      }
      missed.push(...MOMENTS.slice(next, frozen.index));
      landed.push(MOMENTS[frozen.index!].phase);
      next = frozen.index! + 1;
      runId ??= (await readStore()).runs[0]?.id ?? null;
      await page.reload();
      // Completed in the store before the reload: nothing is left to resume.
      if ((await readStore()).runs.find((r) => r.id === runId)?.status === 'completed') {
        completed = true;
        break;
      }
    }

    // The last reload may have come before the end: resume to the end, as a user would.
    if (!completed) {
      await offer.waitFor({ timeout: 20_000 });
      await offer.locator('[data-testid="resume-interrupted"]').click();
      await expect.poll(() => status.textContent(), { timeout: 120_000 }).toBe('finished');
    }

    // Nothing lost, nothing twice, nothing half-written left in IndexedDB.
    const stored = await readStore();
    expect(stored.runs.map((r) => [r.id, r.status, r.last_step])).toEqual([[runId, 'completed', STEPS]]);
    expect(stored.metrics.map((x) => x.step)).toEqual(range(STEPS).map((s) => s + 1));
    // checkpoint_every 1 keeps every update's checkpoint: one each, none staged and left over by a reload.
    expect(stored.checkpoints.map((c) => c.step).sort((a, b) => a - b)).toEqual(range(STEPS).map((s) => s + 1));
    expect(stored.heads).toHaveLength(1);
    expect(stored.checkpoints.find((c) => c.id === stored.heads[0].latest)?.step).toBe(STEPS);
    const local = (id: string) => id.slice(runId!.length + 1);
    const ids = stored.trajectories.map((t) => local(t.id));
    const trained = range(STEPS).flatMap((s) => range(GROUP_SIZE).map((k) => `${s}/0/${k}`));
    const evaluated = EVAL_STEPS.map((s) => `eval/${s}/test/arith_tool/0`);
    expect(ids.sort()).toEqual([...trained, ...evaluated].sort());
    expect(stored.groups.map((g) => local(g.id)).sort()).toEqual(
      [...range(STEPS).map((s) => `${s}/0`), ...EVAL_STEPS.map((s) => `eval/${s}/test/arith_tool`)].sort(),
    );
    for (const g of stored.groups) {
      const id = local(g.id);
      if (id.startsWith('eval/')) {
        expect([g.step, g.trajectory_ids.map(local)], id).toEqual([-1, [`${id}/0`]]);
      } else {
        // Trained once, at its own step, with the advantages that update used and both members once each.
        expect([g.step, g.scored, g.advantages, g.trajectory_ids.map(local)], id).toEqual([
          Number(id.split('/')[0]),
          true,
          true,
          range(GROUP_SIZE).map((k) => `${id}/${k}`),
        ]);
      }
    }
    expect(stored.evaluations.map((e) => `${e.step} ${e.benchmark}`).sort()).toEqual(
      EVAL_STEPS.map((s) => `${s} arith_tool`),
    );
    const markers = stored.markers.map((x) => JSON.stringify({ ...(x as object), id: 0, time: 0 }));
    expect(new Set(markers).size).toBe(markers.length);

    // The screen: the run's trajectories are listed once each; the completed run is not offered again.
    await page.locator('[data-testid="tab-trajectories"]').click();
    await expect
      .poll(() => page.locator('[data-testid="trajectory-count"]').textContent(), { timeout: 20_000 })
      .toMatch(new RegExp(`^${trained.length + evaluated.length} trajectories`));
    await page.locator('[data-testid="tab-train"]').click();
    await page.locator('[data-testid="start-run"]').waitFor();
    expect(await offer.count()).toBe(0);

    const byPhase = Object.fromEntries(
      (['start-up', 'evaluation', 'rollout', 'update', 'checkpoint write', 'completion'] as const).map((p) => [
        p,
        landed.filter((l) => l === p).length,
      ]),
    );
    console.log(
      `crash-reload: ${landed.length} reloads landed ${JSON.stringify(byPhase)}, ${missed.length} moments passed (${missed.map((x) => x.match).join(', ')}); ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(landed.length).toBeGreaterThanOrEqual(20);
    for (const phase of ['start-up', 'evaluation', 'rollout', 'update', 'checkpoint write'] as const)
      expect(byPhase[phase], phase).toBeGreaterThanOrEqual(3);
    // A frozen engine worker dies with its page; the pages say nothing went wrong.
    expect(app.errors).toEqual([]);
  }, 240_000);
});
