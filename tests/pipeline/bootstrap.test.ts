/**
 * The bootstrap flow (pipeline/operations/bootstrap.ts) on a test environment whose tool no policy has
 * seen (tests/fixtures/envs/bell.js), with the shipped base loaded as every command loads it: the check
 * reports 0 for a policy that never calls the tool and says to bootstrap; expert demonstrations, SFT on
 * them and a GRPO run take the held-out success above the baseline on the same items; the same seed gives
 * the same figures. Nothing here depends on which base ships: only that SFT on a dozen demonstrations of
 * one call and one answer moves it.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { RunConfig } from '../../src/config/schema.ts';
import type { EnvironmentSource } from '../../src/contracts.ts';
import { environmentSourceFromFile, installEnvironmentSource } from '../../src/envs/sources.ts';
import type { Environment } from '../../src/envs/types.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadPolicyModel, resolveModelPath } from '../../src/pipeline/platform/node-model.ts';
import {
  bootstrapPolicy,
  type BootstrapEvent,
  type BootstrapReport,
  type BootstrapSettings,
} from '../../src/pipeline/operations/bootstrap.ts';
import { createNodeRun } from '../../src/pipeline/platform/node.ts';
import { auditEnvironment } from '../../src/rollout/env-audit.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { getRun, listRuns, openStore, type Store } from '../../src/store/index.ts';

const BELL = join(import.meta.dirname, '../fixtures/envs/bell.js');
let source: EnvironmentSource;
let env: Environment;

beforeAll(async () => {
  await initBackend();
  source = await environmentSourceFromFile(readFileSync(BELL, 'utf8'), 'bell.js');
  env = await installEnvironmentSource(source);
});

function config(over: Partial<RunConfig['training']> = {}): RunConfig {
  const { config, errors } = validateRunConfig({
    name: 'bootstrap-test',
    seed: 7,
    lora: { r: 8, alpha: 16 },
    training: {
      max_steps: 1,
      batch_size: 1,
      group_size: 2,
      eval_interval: 1,
      ...over,
      ...(over.max_steps === 0 ? { max_steps: 1 } : {}),
    },
    sampling: { max_new_tokens: 40 },
    safety: { enabled: false },
    trajectory_collection: { n_workers: 1, max_steps_per_trajectory: 2 },
    tasks: { environments: ['bell'], eval_items: 8 },
  });
  if (!config) throw new Error(JSON.stringify(errors));
  // 0 updates (stop after SFT) is the flow's own setting, below what a run's config allows.
  if (over.max_steps === 0) config.training.max_steps = 0;
  return config;
}

const SETTINGS: BootstrapSettings = {
  source: { kind: 'expert' },
  demonstrations: 12,
  sftEpochs: 6,
  sftLearningRate: 1e-2,
  sftBatchSize: 4,
};

async function bootstrapOnce(
  store: Store,
  run: RunConfig,
  settings = SETTINGS,
  events: BootstrapEvent[] = [],
): Promise<BootstrapReport> {
  const loaded = await loadPolicyModel(resolveModelPath(run.model.base_model), { config: run });
  try {
    return await bootstrapPolicy({
      store,
      config: run,
      environments: [source],
      model: loaded,
      baseModel: run.model.base_model,
      settings,
      newRun: (trained) => createNodeRun({ store, cores: 1, loadModel: async () => trained }),
      judging: {},
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e),
    });
  } finally {
    loaded.model.dispose();
  }
}

describe('the check samples the policy', () => {
  it('reports 0 for a policy that never calls the new tool and says to bootstrap; a policy that calls it needs no bootstrap', async () => {
    const never = new ScriptedPolicy({ id: 'never-rings', turns: ['done'] });
    const audit = await auditEnvironment(env, {
      items: 4,
      policy: { policy: never, items: 4, label: 'a policy that never rings' },
    });
    expect(audit.policy).toEqual({ label: 'a policy that never rings', level: 1, successes: 0, n: 4 });
    expect(audit.needsBootstrap).toBe(true);
    expect(audit.warnings.join('\n')).toMatch(
      /a policy that never rings solved 0 of 4 sampled items at level 1: .*every group would score 0.*`spindle bootstrap --env bell`/,
    );

    const rings = new ScriptedPolicy({
      id: 'rings',
      turns: ['<tool_call>{"name": "ring", "arguments": {}}</tool_call>', 'done'],
    });
    const good = await auditEnvironment(env, {
      items: 4,
      policy: { policy: rings, items: 4, label: 'a policy that rings' },
    });
    expect(good.policy?.successes).toBe(4);
    expect(good.needsBootstrap).toBe(false);
    expect(good.warnings.join('\n')).not.toMatch(/bootstrap/);
  });
});

describe('bootstrap: demonstrations, SFT, GRPO', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ factory: new IDBFactory() });
  });
  afterAll(() => store.db.close());

  it('takes held-out success from 0 above the baseline, stores the demonstrations and the GRPO run, and repeats itself for the same seed', async () => {
    const events: BootstrapEvent[] = [];
    const report = await bootstrapOnce(store, config(), SETTINGS, events);
    expect(report.baseline).toMatchObject({ successes: 0, n: 8 });
    expect(report.demonstrations).toMatchObject({ source: "the environment's expert", good: 12, total: 12 });
    expect(report.sft.examples).toBe(12);
    expect(report.sft.losses.length).toBe(6 * 3);
    expect(report.sft.losses.at(-1)!).toBeLessThan(report.sft.losses[0]);
    expect(report.sft.adapter?.length).toBeGreaterThan(0);
    expect(report.afterSft!.n).toBe(8);
    expect(report.afterSft!.successes).toBeGreaterThan(report.baseline.successes);
    expect(report.grpo).toMatchObject({ steps: 1 });
    expect(report.grpo!.heldOut!.n).toBe(8);
    // The stages came in order, each figure as an event.
    const stages = events.filter((e) => e.type === 'stage').map((e) => (e as { stage: string }).stage);
    expect(stages).toEqual(['baseline', 'demonstrations', 'sft', 'after-sft', 'grpo']);
    expect(events.filter((e) => e.type === 'held-out').map((e) => (e as { stage: string }).stage)).toEqual([
      'baseline',
      'after-sft',
      'after-grpo',
    ]);
    // Both the demonstrations and the GRPO run are runs of the store, the user's environment stored with each.
    const demoRun = await getRun(store, report.demonstrations.runId!);
    expect(demoRun?.environments?.map((e) => e.name)).toEqual(['bell']);
    const stored = await getRun(store, report.grpo!.runId);
    expect(stored?.status).toBe('completed');
    expect(report.grpo!.runName).toBe(stored?.name);

    const again = await bootstrapOnce(store, config());
    expect([again.baseline, again.afterSft, again.grpo?.heldOut, again.sft.losses]).toEqual([
      report.baseline,
      report.afterSft,
      report.grpo?.heldOut,
      report.sft.losses,
    ]);
  }, 120_000);

  it('fine-tunes on the stored episodes of a run, and refuses an empty source naming what to do', async () => {
    const runs = await listRuns(store);
    const demos = runs.find((r) => r.name === 'bootstrap-test-demonstrations')!;
    const report = await bootstrapOnce(store, config({ max_steps: 0 }), {
      ...SETTINGS,
      source: { kind: 'episodes', runId: demos.id },
    });
    expect(report.demonstrations).toMatchObject({
      source: `the episodes of run ${demos.id}`,
      good: 12,
      total: 12,
      runId: null,
    });
    expect(report.afterSft!.successes).toBeGreaterThan(0);
    expect(report.grpo).toBeNull();
    await expect(
      bootstrapOnce(store, config({ max_steps: 0 }), {
        ...SETTINGS,
        source: { kind: 'episodes', runId: 'no-such-run' },
      }),
    ).rejects.toThrow(/no stored train-split episodes of bell in run no-such-run: collect some first/);
  }, 120_000);

  it('refuses an environment without an expert, a config of two environments, and sizes below 1, before loading anything', async () => {
    const text = readFileSync(BELL, 'utf8');
    const withoutExpert = `${text.slice(0, text.indexOf('  expert()')).replace("name: 'bell'", "name: 'bell_without_expert'")}};\n`;
    const noExpert = await installEnvironmentSource(
      await environmentSourceFromFile(withoutExpert, 'bell-without-expert.js'),
    );
    expect(noExpert.expert).toBeUndefined();
    const c = config();
    await expect(
      bootstrapOnce(store, { ...c, tasks: { ...c.tasks, environments: ['bell_without_expert'] } }),
    ).rejects.toThrow(
      /bell_without_expert has no expert\(task\), so it cannot demonstrate itself: add an expert to the module, or take demonstrations from your own episodes or from a larger model/,
    );
    await expect(
      bootstrapOnce(store, { ...c, tasks: { ...c.tasks, environments: ['bell', 'arith_tool'] } }),
    ).rejects.toThrow(/one environment at a time; the config names 2 \(bell, arith_tool\)/);
    await expect(bootstrapOnce(store, c, { ...SETTINGS, sftEpochs: 0 })).rejects.toThrow(
      /SFT epochs must be a whole number ≥ 1, got 0/,
    );
  }, 60_000);
});
