import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import type { Metrics, RunMarker, Trajectory } from '../../src/contracts.ts';
import { sequenceLogprobs } from '../model/helpers.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import type { TrainerCheckpoint } from '../../src/train/checkpoint.ts';
import { createRng } from '../../src/rng.ts';
import { Trainer, type CollectGroups } from '../../src/train/trainer.ts';
import { trajectory } from './fixtures.ts';
import { tinyModel, useWasm } from './helpers.ts';

beforeAll(useWasm);

function config(over: (c: RunConfig) => void = () => {}): RunConfig {
  const c = structuredClone(DEFAULT_CONFIG);
  c.lora = { r: 4, alpha: 8, dropout: 0, target_modules: ['q_proj', 'v_proj', 'up_proj'], freeze_layers: null };
  c.training = {
    ...c.training,
    batch_size: 2,
    group_size: 4,
    learning_rate: 1e-2,
    warmup_steps: 2,
    checkpoint_every: 2,
    max_steps: 4,
  };
  c.replay = { ...c.replay, capacity: 16 };
  c.curriculum = { ...c.curriculum, window: 4, advance_threshold: 0.5 };
  c.safety = { ...c.safety, check_every: 2 };
  over(c);
  return c;
}

/**
 * A fake environment: each task is a prompt of 3 tokens; a sample is 4 tokens drawn from the step's
 * seed. Score: the share of tokens ≥ 8 (so the groups differ), judged by a "rule" vote. Log-probs
 * come from the model itself (on-policy), as the rollout would record them.
 */
function fakeCollector(
  model: TransformerModel,
  log: { levels: (Record<string, number> | null)[] } = { levels: [] },
): CollectGroups {
  return async (n, step, levels) => {
    log.levels.push(levels);
    const rng = createRng(1000 + step);
    const groups: Trajectory[][] = [];
    for (let g = 0; g < n; g++) {
      const prompt = [1, 2 + g, 3];
      const seqs = Array.from({ length: 4 }, () => [...prompt, ...Array.from({ length: 4 }, () => 4 + rng.int(0, 7))]);
      const lps = await sequenceLogprobs(model, seqs);
      groups.push(
        seqs.map((tokens, i) => {
          const score = tokens.slice(3).filter((x) => x >= 8).length / 4;
          return trajectory({
            id: `s${step}g${g}i${i}`,
            group_id: `s${step}g${g}`,
            tokens,
            assistant_mask: tokens.map((_, t) => (t >= 3 ? 1 : 0)),
            logprobs: [0, ...lps[i]].map((x, t) => (t >= 3 ? x : 0)),
            turn_spans: [[3, 7]],
            judge_score: score,
            votes: [{ judge_id: 'rule', score, rationale: '', latency_ms: 0 }],
            steps: [
              {
                step_id: 0,
                turn: 0,
                thought: null,
                tool_call: {
                  tool_name: 'calc',
                  parameters: {},
                  result: '',
                  error: i === 0 ? 'x' : null,
                  latency_ms: 0,
                },
                observation: '',
                timestamp: 0,
              },
            ],
          });
        }),
      );
    }
    return groups;
  };
}

describe('trainer', () => {
  it('logs the TRL metrics of a GRPO step and admits good trajectories to the replay buffer', async () => {
    const model = tinyModel({ lora: false });
    const records: Metrics[] = [];
    const t = new Trainer({
      model,
      config: config(),
      collectGroups: fakeCollector(model),
      onMetrics: (r) => records.push(r.metrics),
    });
    const m = await t.trainStep();
    for (const k of [
      'reward',
      'reward_std',
      'frac_reward_zero_std',
      'kl',
      'entropy',
      'clip_ratio/low_mean',
      'clip_ratio/high_mean',
      'clip_ratio/region_mean',
      'completions/mean_length',
      'tools/call_frequency',
      'tools/failure_frequency',
      'train/loss',
      'train/grad_norm',
      'train/lr',
      'rewards/rule/mean',
    ]) {
      if (k === 'kl') continue; // only with a reference (kl_beta > 0)
      expect(m[k], k).toBeTypeOf('number');
    }
    expect(m['completions/mean_length']).toBe(4);
    expect(m['tools/call_frequency']).toBe(1);
    expect(m['tools/failure_frequency']).toBe(0.25);
    expect(m['train/lr']).toBeCloseTo(5e-3, 12); // warm-up step 1 of 2
    expect(records).toHaveLength(1);
    expect(t.step).toBe(1);
    expect(t.replayBuffer.size).toBeGreaterThan(0);
    t.dispose();
    model.dispose();
  });

  it('grpo.iterations takes that many optimizer steps on one collected batch, the later ones off-policy', async () => {
    const model = tinyModel({ lora: false });
    let collected = 0;
    const collect = fakeCollector(model);
    const t = new Trainer({
      model,
      config: config((c) => (c.grpo.iterations = 3)),
      collectGroups: (n, step, levels) => (collected++, collect(n, step, levels)),
    });
    const m = await t.trainStep();
    expect(collected).toBe(1);
    expect(t.optimizer.stepCount).toBe(3);
    expect(t.step).toBe(1);
    // Warm-up step 3 of 2 is past warm-up: the last pass ran at the full rate.
    expect(m['train/lr']).toBeCloseTo(1e-2, 12);
    t.dispose();
    model.dispose();
    // The same first step with one pass: the surrogate loss of the third pass is lower, because the two
    // passes before it already moved the policy toward the positive-advantage samples.
    const once = tinyModel({ lora: false });
    const single = new Trainer({ model: once, config: config(), collectGroups: fakeCollector(once) });
    const m1 = await single.trainStep();
    expect(m['train/loss']).toBeLessThan(m1['train/loss'] - 1e-4);
    single.dispose();
    once.dispose();
  });

  it('gradient checkpointing on or off: two updates give byte-identical weights (the same packing, shared prompts included)', async () => {
    /** The trained weights' bytes after two updates of a run that differs only in gradient_checkpointing. */
    const trained = async (checkpointing: 'on' | 'off', lora: boolean) => {
      const model = tinyModel({ lora: false });
      const c = config((c) => {
        c.training = { ...c.training, gradient_checkpointing: checkpointing, max_steps: 2, grad_accum_steps: 2 };
        if (lora) c.lora.dropout = 0.1;
        else c.lora.r = 0;
      });
      const t = new Trainer({ model, config: c, collectGroups: fakeCollector(model) });
      for (let step = 0; step < 2; step++) await t.trainStep();
      expect(model.recompute).toBe(checkpointing);
      const { weights } = await t.checkpoint();
      t.dispose();
      model.dispose();
      return weights.tensors.map(([name, v]) => [
        name,
        Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength).toString('hex'),
      ]);
    };
    for (const lora of [true, false]) {
      const plain = await trained('off', lora);
      expect(plain.length).toBeGreaterThan(0);
      expect(await trained('on', lora)).toEqual(plain);
    }
  });

  it('does not grow tf.memory().numTensors across a step', async () => {
    const model = tinyModel({ lora: false });
    const t = new Trainer({
      model,
      config: config((c) => (c.grpo.kl_beta = 0.05)),
      collectGroups: fakeCollector(model),
    });
    await t.trainStep();
    const before = tf.memory().numTensors;
    const m = await t.trainStep();
    expect(tf.memory().numTensors).toBe(before);
    expect(m.kl).toBeGreaterThanOrEqual(0);
    t.dispose();
    model.dispose();
  });

  it('resuming from a checkpoint reproduces the next step exactly', async () => {
    const cfg = config();
    const modelA = tinyModel({ lora: false });
    const saved: TrainerCheckpoint[] = [];
    const a = new Trainer({ model: modelA, config: cfg, collectGroups: fakeCollector(modelA) });
    await a.trainStep();
    await a.trainStep();
    saved.push(structuredClone(await a.checkpoint()));
    const next = await a.trainStep();
    expect(saved[0].step).toBe(2);
    expect(saved[0].replay.items.length).toBeGreaterThan(0);

    // A different init, then the (frozen) base weights copied: the adapters must come from the checkpoint.
    const modelB = tinyModel({ lora: false, seed: 99 });
    modelB.setWeights(await modelA.getWeights());
    const b = new Trainer({ model: modelB, config: cfg, collectGroups: fakeCollector(modelB), resumeFrom: saved[0] });
    expect(b.step).toBe(2);
    const resumed = await b.trainStep();
    const withoutTimings = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));
    expect(withoutTimings(resumed)).toEqual(withoutTimings(next));
    expect(resumed['perf/update_seconds']).toBeGreaterThan(0);
    expect(resumed['replay/samples']).toBeGreaterThan(0); // the replay draw (RNG state) was part of it
    a.dispose();
    b.dispose();
    modelA.dispose();
    modelB.dispose();
  });

  it('skips zero-std groups (no update when every group is flat) and counts them', async () => {
    const model = tinyModel({ lora: false });
    const flat: CollectGroups = async (n) =>
      (await fakeCollector(model)(n, 0, null)).map((g) => g.map((t) => ({ ...t, judge_score: 0.5 })));
    const t = new Trainer({ model, config: config(), collectGroups: flat });
    const m = await t.trainStep();
    expect(m.frac_reward_zero_std).toBe(1);
    expect(m['train/loss']).toBeUndefined();
    t.dispose();
    model.dispose();
  });

  it('drives the curriculum and logs level changes', async () => {
    const model = tinyModel({ lora: false });
    const log = { levels: [] as (Record<string, number> | null)[] };
    const markers: RunMarker[] = [];
    const always1: CollectGroups = async (n, step, levels) => {
      const gs = await fakeCollector(model, log)(n, step, levels);
      return gs.map((g) => g.map((t, i) => ({ ...t, judge_score: i === 0 ? 0.5 : 1 }))); // mean 0.875 > 0.5
    };
    const t = new Trainer({ model, config: config(), collectGroups: always1, onMarker: (m) => markers.push(m) });
    await t.trainStep();
    await t.trainStep();
    expect(markers.filter((m) => m.kind === 'curriculum').length).toBeGreaterThan(0);
    expect(markers[0]).toMatchObject({ kind: 'curriculum', env: 'arith_tool', from: 1, to: 2 });
    expect(log.levels[0]).toEqual({ arith_tool: 1 });
    expect(log.levels[1]!.arith_tool).toBeGreaterThan(1);
    t.dispose();
    model.dispose();
  });

  it("counts only the current level's episodes toward advancing: those drawn a level above do not", async () => {
    const model = tinyModel({ lora: false });
    const markers: RunMarker[] = [];
    const aboveOnly: CollectGroups = async (n, step, levels) => {
      const gs = await fakeCollector(model)(n, step, levels);
      return gs.map((g) => g.map((t, i) => ({ ...t, difficulty: 2, success: true, judge_score: i === 0 ? 0.5 : 1 })));
    };
    const t = new Trainer({ model, config: config(), collectGroups: aboveOnly, onMarker: (m) => markers.push(m) });
    await t.trainStep();
    await t.trainStep();
    expect(markers.filter((m) => m.kind === 'curriculum')).toEqual([]);
    t.dispose();
    model.dispose();
  });

  it('a regression rolls back to the best checkpoint and raises the capability share', async () => {
    const model = tinyModel({ lora: false });
    const evals = [{ bench: 0.8 }, { bench: 0.5 }];
    const markers: RunMarker[] = [];
    const t = new Trainer({
      model,
      config: config(),
      collectGroups: fakeCollector(model),
      evaluateBaselines: async () => evals.shift()!,
      onMarker: (m) => markers.push(m),
    });
    const m0 = await t.trainStep(); // step 0: baselines (best = the fresh adapters)
    expect(m0['safety/bench/validation_success']).toBe(0.8);
    const fresh = await t.checkpoint();
    const freshB = fresh.weights.tensors.find(([k]) => k.endsWith('lora_B.weight'))!;
    await t.trainStep();
    const moved = (await t.checkpoint()).weights.tensors.find(([k]) => k === freshB[0])!;
    expect(Array.from(moved[1].data)).not.toEqual(Array.from(freshB[1].data));
    const m2 = await t.trainStep(); // step 2: 0.5 < 0.8·0.95 → regression, roll back to step 0, then train step 2
    expect(m2['safety/regressions']).toBe(1);
    expect(markers.find((m) => m.kind === 'regression')).toMatchObject({
      benchmark: 'bench',
      baseline: 0.8,
      current: 0.5,
      rolled_back_to: 0,
    });
    expect(t.dataMix.online_ratio).toBe(0.5);
    // the optimizer state came back from step 0 (0 updates) and step 2 then made one: 1, not 3
    expect(t.optimizer.stepCount).toBe(1);
    expect(m2['data/online_ratio']).toBe(0.5);
    t.dispose();
    model.dispose();
  });

  it('sftTrain lowers the loss over epochs', async () => {
    const model = tinyModel({ lora: false });
    const t = new Trainer({
      model,
      config: config((c) => {
        c.training.warmup_steps = 0;
        c.training.grad_accum_steps = 1;
      }),
      collectGroups: fakeCollector(model),
    });
    const ex = [
      { tokens: [1, 2, 3, 4, 5, 6], mask: [0, 0, 0, 1, 1, 1] },
      { tokens: [1, 3, 3, 7, 8, 9], mask: [0, 0, 0, 1, 1, 1] },
      { tokens: [2, 2, 3, 10, 11], mask: [0, 0, 0, 1, 1] },
    ];
    const losses = await t.sftTrain(ex, 4);
    expect(losses).toHaveLength(8); // 2 updates (batch 2) × 4 epochs
    expect(losses[6] + losses[7]).toBeLessThan(losses[0] + losses[1] - 0.1);
    t.dispose();
    model.dispose();
  });
});

describe('transfer', () => {
  it('starts from the source adapters, freezes the layer range and scales the learning rate', async () => {
    const src = tinyModel({ lora: false });
    const s = new Trainer({ model: src, config: config(), collectGroups: fakeCollector(src) });
    await s.trainStep();
    await s.trainStep();
    const source = structuredClone(await s.checkpoint());
    const base = tinyModel({ lora: false }); // same base weights (seed 1)
    const cfg = config((c) => {
      c.lora.freeze_layers = '0';
      c.transfer = { source_checkpoint: 'shell_exec/step-2', learning_rate_scale: 0.3 };
    });
    const t = new Trainer({
      model: base,
      config: cfg,
      collectGroups: fakeCollector(base),
      transferFrom: { checkpoint: source },
    });
    expect(t.setup.learningRate).toBeCloseTo(3e-3, 12);
    expect(t.setup.frozenLayers).toEqual([0]);
    // every source adapter is loaded; only layer 1's train
    const loaded = (await t.checkpoint()).weights.tensors;
    expect(loaded.map(([k]) => k)).toEqual(source.weights.tensors.map(([k]) => k));
    loaded.forEach(([, v], i) => expect(Array.from(v.data)).toEqual(Array.from(source.weights.tensors[i][1].data)));
    expect(t.optimizer.variables.length).toBe(6); // 3 modules × (A, B) on layer 1
    const layer0 = async () =>
      (await t.checkpoint()).weights.tensors
        .filter(([k]) => k.includes('layers.0.'))
        .map(([, v]) => Array.from(v.data));
    const before = await layer0();
    await t.trainStep();
    expect(await layer0()).toEqual(before);
    s.dispose();
    t.dispose();
    src.dispose();
    base.dispose();
  });

  it('starts from an adapter its loader attached: the adapters kept as loaded, the layer range frozen, the rate scaled once', async () => {
    const model = tinyModel(); // adapters attached, as the loader attaches a PEFT zip
    const attached = model.lora;
    const cfg = config((c) => {
      c.lora.freeze_layers = '0';
      c.transfer = { source_checkpoint: 'adapter.zip', learning_rate_scale: 0.5 };
    });
    const t = new Trainer({
      model,
      config: cfg,
      collectGroups: fakeCollector(model),
      transferFrom: { adapterAttached: true },
    });
    expect(t.setup.learningRate).toBeCloseTo(5e-3, 12);
    expect(t.setup.frozenLayers).toEqual([0]);
    expect(model.lora).toBe(attached);
    expect(cfg.training.learning_rate).toBe(1e-2);
    t.dispose();
    // Without adapters on the model there is nothing to start from, and it says so.
    const plain = tinyModel({ lora: false });
    expect(
      () =>
        new Trainer({
          model: plain,
          config: cfg,
          collectGroups: fakeCollector(plain),
          transferFrom: { adapterAttached: true },
        }),
    ).toThrow(/source adapter is not attached/);
    model.dispose();
    plain.dispose();
  });
});
