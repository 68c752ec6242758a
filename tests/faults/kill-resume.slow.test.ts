/**
 * Crash consistency: `spindle train` is SIGKILLed at 24 moments — start-up, evaluations,
 * rollouts, updates, checkpoint writes (the snapshot half written, written but not renamed, just
 * renamed; a checkpoint staged but not committed), the final status write — and resumed each time
 * with `--resume RUN_ID` until it finishes. Then nothing is lost or done twice: metrics of steps
 * 1..N once each, one checkpoint per step and the latest at N, exactly the trajectories and groups
 * of N updates and of the evaluations at 0, 2 and 4, each evaluation once, no temporary snapshot left
 * behind, the run completed; and since the run is reproducible, the killed-and-resumed runs end with
 * the very weights, optimizer step, episodes and metrics of a run that was never killed.
 *
 * The moments are chosen by events, not by clocks: kill-resume.hook.mjs (preloaded into the child)
 * tells each episode handed to a rollout worker and each phase of each store save on stderr, and
 * freezes the child at the moment a kill names, where the test kills it. A few kills land a fixed
 * delay after such an event or after the start, for moments between events (an episode or update
 * under way). The hook observes only; the command runs as it does without it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors } from '../../src/hub/safetensors.ts';
import { decodeSnapshot } from '../../src/store/snapshot.ts';
import { nanoModelDir, tempDir, tinyConfig, writeConfig } from '../cli/helpers.ts';

const BIN = join(import.meta.dirname, '../../bin/spindle.mjs');
const HOOK = pathToFileURL(join(import.meta.dirname, 'kill-resume.hook.mjs')).href;
const STEPS = 4;
const EVAL_STEPS = [0, 2, 4];
const GROUP_SIZE = 2;
const TEMP = /^spindle\.db\.tmp-/;

type Kind = 'start-up' | 'evaluation' | 'rollout' | 'update' | 'checkpoint write' | 'completion';

/**
 * One SIGKILL: at the hook's freeze on the event `freeze` names (regular expressions matched in order),
 * or `delayMs` after the first stderr line matching `after` (after the start when there is none).
 */
interface Kill {
  kind: Kind;
  freeze?: string[];
  after?: RegExp;
  delayMs?: number;
}

const at = (kind: Kind, ...freeze: string[]): Kill => ({ kind, freeze });
const later = (kind: Kind, delayMs: number, after?: RegExp): Kill => ({ kind, after, delayMs });

/**
 * Three runs, each killed at the moments of one part of a run (7, 9 and 8 kills: the runs go two at a
 * time with the uninterrupted one, and take about as long that way), then resumed to the end.
 */
const SCENARIOS: { name: string; kills: Kill[] }[] = [
  {
    name: 'start-up and the first update',
    kills: [
      later('start-up', 200), // node loading the CLI
      at('start-up', '^save 1 .* torn$'), // the first snapshot (the new run) half written: no run on disk
      at('start-up', '^save 1 .* renamed$'), // the run on disk, nothing else
      at('evaluation', '^episode eval/0/'), // the baseline evaluation under way
      at('rollout', '^episode 0/0/0$'),
      at('checkpoint write', ' staged .* renamed$'), // checkpoint 1 staged, not committed: on disk alone
      at('checkpoint write', '^save \\d+ head [1-4] .* torn$'),
    ],
  },
  {
    name: 'the middle: checkpoint 2 and the evaluation at step 2',
    kills: [
      later('update', 0, /^train: steps .*\(1\/4\)/), // checkpoint 1 committed in memory, its save under way
      later('start-up', 900), // a resumed run starting
      at('checkpoint write', '^save \\d+ head 2 .* torn$'),
      at('checkpoint write', '^save \\d+ head 2 .* unrenamed$'),
      at('checkpoint write', '^save \\d+ head 2 .* renamed$'), // checkpoint 2 on disk, its evaluation owed
      at('evaluation', '^episode eval/2/'),
      later('evaluation', 30, /^spindle-test: episode eval\/2\//), // the evaluation's episode under way
      at('evaluation', '^eval step 2 '), // reported, perhaps not on disk yet
      at('rollout', '^episode 2/0/0$'),
    ],
  },
  {
    name: 'the end: checkpoint 4, the last evaluation, the completed status',
    kills: [
      at('rollout', '^episode 3/0/1$'),
      at('checkpoint write', ' staged .* torn$'),
      at('checkpoint write', '^save \\d+ head 4 .* renamed$'),
      at('evaluation', '^episode eval/4/'),
      at('evaluation', '^eval step 4 '),
      at('completion', ' completed torn$'), // the run's completed status half written
      at('completion', ' completed renamed$'), // completed on disk; killed before it exited
      later('start-up', 500), // resuming a completed run
    ],
  },
];

let model: string;

beforeAll(async () => {
  model = await nanoModelDir(5);
}, 60_000);

interface ChildResult {
  killed: boolean;
  code: number | null;
  out: string;
  err: string;
}

/** Runs `spindle train` in `dir` (with the hook), killing it as `kill` says. */
function train(dir: string, args: string[], kill?: Kill): Promise<ChildResult> {
  const env = { ...process.env, SPINDLE_KILL_TEST_FREEZE: JSON.stringify(kill?.freeze ?? []) };
  const child = spawn(process.execPath, ['--import', HOOK, BIN, 'train', ...args, '--model', model], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let sent = false;
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) sent = child.kill('SIGKILL');
  };
  let timer: NodeJS.Timeout | undefined;
  const killLater = (ms: number) => (timer = setTimeout(killNow, ms));
  if (kill && !kill.freeze && !kill.after) killLater(kill.delayMs ?? 0);
  let pending = '';
  let waiting = Boolean(kill?.after);
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (kill?.freeze && line.startsWith('spindle-test: frozen at ')) killNow();
      if (waiting && kill!.after!.test(line)) {
        waiting = false;
        killLater(kill!.delayMs ?? 0);
      }
    }
  });
  const watchdog = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      clearTimeout(timer);
      // A kill counts only when it ended the process (not one sent as it was exiting by itself).
      resolve({ killed: sent && signal === 'SIGKILL', code, out, err });
    }),
  );
}

interface Snapshot {
  stores: Record<string, Record<string, unknown>[]>;
}

function readStore(dir: string): Snapshot | null {
  const path = join(dir, '.spindle', 'spindle.db');
  // Read as the file is, without opening the store (an open would clear temporary snapshots).
  return existsSync(path) ? (decodeSnapshot(readFileSync(path), path) as Snapshot) : null;
}

const temps = (dir: string) =>
  existsSync(join(dir, '.spindle')) ? readdirSync(join(dir, '.spindle')).filter((f) => TEMP.test(f)) : [];

interface Outcome {
  runId: string;
  landed: Kind[];
  tempsSeen: number;
  seconds: number;
  final: ChildResult;
  store: Snapshot;
}

/** A fresh run killed at each moment in turn (resumed after each kill), then resumed to the end. */
async function killAndResume(kills: Kill[]): Promise<Outcome> {
  const started = performance.now();
  const dir = tempDir();
  writeConfig(dir, config());
  let runId: string | null = null;
  const landed: Kind[] = [];
  let tempsSeen = 0;
  let final: ChildResult | null = null;
  const args = () => (runId ? ['--resume', runId] : ['--config', 'run.yaml']);
  for (const kill of kills) {
    const result = await train(dir, args(), kill);
    if (!result.killed) {
      final = result; // it finished before this moment came: the moments left have passed
      break;
    }
    landed.push(kill.kind);
    tempsSeen += temps(dir).length;
    const runs = readStore(dir)?.stores.runs ?? []; // the snapshot on disk is whole, whatever the moment
    expect(runs.length).toBeLessThanOrEqual(1);
    runId ??= (runs[0]?.id as string | undefined) ?? null;
  }
  final ??= await train(dir, args());
  expect(final.code, final.err).toBe(0);
  runId ??= /run (\S+) \(.+\): finished/.exec(final.out)?.[1] ?? null;
  expect(final.out).toMatch(new RegExp(`run ${runId} \\(.+\\): finished at step ${STEPS}`));
  // The store opened by each resume cleared the temporary snapshots of the processes killed before.
  expect(readdirSync(join(dir, '.spindle'))).toEqual(['spindle.db']);
  return {
    runId: runId!,
    landed,
    tempsSeen,
    seconds: (performance.now() - started) / 1000,
    final,
    store: readStore(dir)!,
  };
}

function config() {
  return tinyConfig((c) => {
    c.training.max_steps = STEPS;
    c.training.eval_interval = 2;
    c.training.eval_at_start = true;
    c.training.checkpoint_every = 1;
    c.training.group_size = GROUP_SIZE;
    c.training.batch_size = 1;
    c.trajectory_collection.reproducible = true;
  });
}

type Rec = Record<string, unknown>;
const ofRun = (s: Snapshot, store: string, runId: string) => (s.stores[store] ?? []).filter((r) => r.run_id === runId);

/** Checks nothing was lost or done twice; returns what a run that was never killed must match. */
function verify({ runId, store }: Pick<Outcome, 'runId' | 'store'>) {
  const runs = store.stores.runs;
  expect(runs.map((r) => [r.id, r.status, r.last_step])).toEqual([[runId, 'completed', STEPS]]);

  const metrics = ofRun(store, 'metrics', runId);
  expect(metrics.map((m) => m.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));

  // checkpoint_every 1 keeps every step's checkpoint: one each, none staged and left over by a kill.
  const checkpoints = ofRun(store, 'checkpoints', runId);
  expect(checkpoints.map((c) => c.step).sort()).toEqual([1, 2, 3, 4]);
  const head = store.stores.checkpoint_heads.find((h) => h.run_id === runId)!;
  const latest = checkpoints.find((c) => c.id === head.latest)!;
  expect(latest.step).toBe(STEPS);

  // Trajectory ids carry the step: exactly those of the N updates' groups and of the evaluations.
  const local = (id: unknown) => String(id).slice(runId.length + 1);
  const trajectories = ofRun(store, 'trajectories', runId);
  const ids = trajectories.map((t) => local(t.id));
  const trained = Array.from({ length: STEPS }, (_, s) =>
    Array.from({ length: GROUP_SIZE }, (_, i) => `${s}/0/${i}`),
  ).flat();
  const evaluated = EVAL_STEPS.map((s) => `eval/${s}/test/arith_tool/0`);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.sort()).toEqual([...trained, ...evaluated].sort());

  const groups = ofRun(store, 'groups', runId);
  expect(groups.map((g) => local(g.id)).sort()).toEqual(
    [
      ...Array.from({ length: STEPS }, (_, s) => `${s}/0`),
      ...EVAL_STEPS.map((s) => `eval/${s}/test/arith_tool`),
    ].sort(),
  );
  for (const g of groups.filter((x) => !local(x.id).startsWith('eval/'))) {
    expect(g.step, String(g.id)).toBe(Number(local(g.id).split('/')[0]));
    expect(g.scored, String(g.id)).not.toBeNull();
    expect((g.trajectory_ids as string[]).map(local), String(g.id)).toEqual(
      Array.from({ length: GROUP_SIZE }, (_, i) => `${local(g.id)}/${i}`),
    );
  }

  const evaluations = ofRun(store, 'evaluations', runId);
  expect(evaluations.map((e) => `${e.step} ${e.benchmark}`).sort()).toEqual(EVAL_STEPS.map((s) => `${s} arith_tool`));
  const markers = ofRun(store, 'markers', runId).map(({ id: _id, time: _time, ...m }) => JSON.stringify(m));
  expect(new Set(markers).size).toBe(markers.length);

  const optimizer = readSafetensors(new Uint8Array(latest.optimizer as ArrayBuffer), 'optimizer').metadata;
  const deterministic = (m: Rec) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));
  return {
    weights: createHash('sha256')
      .update(new Uint8Array(latest.adapter as ArrayBuffer))
      .digest('hex'),
    optimizerStep: optimizer.step,
    episodes: Object.fromEntries(trajectories.map((t) => [local(t.id), (t.tokens as number[]).join(',')])),
    metrics: metrics.map((m) => deterministic(m.metrics as Rec)),
    evaluations: Object.fromEntries(evaluations.map((e) => [e.step, e.results])),
  };
}

/** Runs the jobs two at a time (two cores). */
async function twoAtATime<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all([lane(), lane()]);
  return results;
}

describe('spindle train killed at 24 moments', () => {
  it('resumes each time to the end with nothing lost, duplicated or left behind', async () => {
    const started = performance.now();
    const [reference, ...outcomes] = await twoAtATime<Outcome>([
      () => killAndResume([]),
      ...SCENARIOS.map((s) => () => killAndResume(s.kills)),
    ]);
    const expected = verify(reference);
    for (const [i, outcome] of outcomes.entries()) {
      const where = `${SCENARIOS[i].name}: ${outcome.landed.length} kills landed (${outcome.landed.join(', ')})`;
      expect(verify(outcome), where).toEqual(expected);
    }
    const landed = outcomes.flatMap((o) => o.landed);
    const byKind = Object.fromEntries(
      ['start-up', 'evaluation', 'rollout', 'update', 'checkpoint write', 'completion'].map((k) => [
        k,
        landed.filter((l) => l === k).length,
      ]),
    );
    console.log(
      `kill-resume: ${landed.length} SIGKILLs landed ${JSON.stringify(byKind)}; ${outcomes.reduce((n, o) => n + o.tempsSeen, 0)} left a temporary snapshot (cleared by the resume); ${((performance.now() - started) / 1000).toFixed(1)} s (the runs: ${[reference, ...outcomes].map((o) => o.seconds.toFixed(1)).join(', ')} s)`,
    );
    expect(landed.length).toBeGreaterThanOrEqual(20);
    for (const kind of ['start-up', 'evaluation', 'rollout', 'checkpoint write'] as const)
      expect(byKind[kind], kind).toBeGreaterThanOrEqual(3);
  });
});
