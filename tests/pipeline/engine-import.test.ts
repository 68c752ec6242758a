/**
 * The engine's Hugging Face import and merged-weights export (what the Models screen calls): an
 * imported model becomes the playground's local policy, and a run's base only when its config names it; a broken import
 * changes nothing; a merge folds B·A·alpha/r into the base weights and zips the HF layout.
 */
import 'fake-indexeddb/auto';
import { unzipSync } from 'fflate';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import type { PeftConfig } from '../../src/export/peft.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';
import { Engine } from '../../src/pipeline/engine/browser-engine.ts';
import type { EngineDeps } from '../../src/pipeline/engine/engine-api.ts';
import type { DownloadCache, DownloadProgress } from '../../src/hub/hub.ts';
import { spawnNodeRolloutWorker } from '../../src/pipeline/platform/node.ts';
import { getRun, openStore, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;
let store: Store;
const R = 2;
const Q = 'model.layers.0.self_attn.q_proj.weight';

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  modelDir = await writeTinyModel(4, 'spindle-import-model-');
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

function engine(): Engine {
  return new Engine(engineDeps());
}

function engineDeps(): EngineDeps {
  return {
    initBackend: () => initBackend({ forced: 'wasm' }),
    deviceLost: () => null,
    openStore: async () => store,
    loadModel: async (base) => loadHfModel(base),
    baseModelMissing: () => 'no shipped model in this test',
    // Playground episodes run in a rollout worker, as a run's do.
    spawnWorker: (index, generator) => spawnNodeRolloutWorker(index, generator),
    cores: 1,
  };
}

function modelFiles(
  config: (json: Record<string, unknown>) => Record<string, unknown> = (j) => j,
): Record<string, Blob> {
  const json = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  return {
    'config.json': new Blob([JSON.stringify(config({ ...json, _name_or_path: 'tiny-test' }))]),
    'model.safetensors': new Blob([readFileSync(join(modelDir, 'model.safetensors'))]),
  };
}

describe('importing a Hugging Face model into the engine', () => {
  it('makes the imported model the local policy, and refuses a broken import without changing anything', async () => {
    const e = engine();
    expect(e.policyStatus().unavailable).toBe('no shipped model in this test');
    const info = await e.importModel({ files: modelFiles() });
    expect(info).toMatchObject({ name: 'tiny-test', base_model: 'imported:tiny-test', family: 'llama' });
    // Its card: what Spindle made of it, and that the folder had no README.md.
    expect(info.card).toMatch(/^# tiny-test\n/);
    expect(info.card).toMatch(/\| architecture \| Llama: 1 layer, hidden 32, 2 query \/ 1 key-value heads of 16/);
    expect(info.card).toMatch(/\| weights on this device \| float32 \|/);
    expect(info.card).toMatch(/`model.base_model: imported:tiny-test`/);
    expect(info.card).toMatch(/no README\.md/);
    expect(e.policyStatus()).toEqual({ unavailable: null, label: 'the imported model tiny-test', name: 'tiny-test' });
    const trajectory = await e.playEpisode(
      {
        episodeId: 'p',
        policy: 'local',
        task: getEnvironment('arith_tool').generate(2, 1, 'train'),
        seed: 1,
        sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 6 },
        maxSteps: 1,
      },
      () => {},
    );
    expect(trajectory.token_count).toBeGreaterThan(0);

    // A missing tensor, then an unsupported architecture: each names the problem; the import stays.
    const weights = readSafetensors(new Uint8Array(readFileSync(join(modelDir, 'model.safetensors')))).tensors;
    weights.delete(Q);
    const missing = {
      ...modelFiles((j) => ({ ...j, _name_or_path: 'broken' })),
      'model.safetensors': new Blob([writeSafetensors(weights) as BlobPart]),
    };
    await expect(e.importModel({ files: missing })).rejects.toThrow(/q_proj/);
    await expect(e.importModel({ files: modelFiles((j) => ({ ...j, model_type: 'gpt2' })) })).rejects.toThrow(
      /model_type "gpt2".*not supported/,
    );
    // A 70B-shaped config on the wasm backend is refused from its config.json alone, by what it needs.
    const huge = (j: Record<string, unknown>) => ({
      ...j,
      hidden_size: 8192,
      num_hidden_layers: 80,
      intermediate_size: 28672,
      num_attention_heads: 64,
      num_key_value_heads: 8,
      head_dim: 128,
    });
    await expect(e.importModel({ files: modelFiles(huge) })).rejects.toThrow(
      /needs about [\d.]+ GiB to load and train .* but 4\.00 GiB is available/,
    );
    expect(e.importedModel()).toMatchObject({ name: 'tiny-test', base_model: 'imported:tiny-test', card: info.card });
    expect(e.policyStatus().label).toBe('the imported model tiny-test');
  });

  it('never makes an import the base of a run that names another: the run keeps its configured base and says which', async () => {
    const e = engine();
    await e.importModel({ files: modelFiles() });
    const events: RunEvent[] = [];
    e.subscribe((event) => void events.push(event));
    const config = { ...DEFAULT_CONFIG, name: 'on-the-default-base' };
    // The shipped base is missing in this test, so the start fails loading it: it tried no other model.
    await expect(e.start(config)).rejects.toThrow(/spindle-base/);
    const runId = events.find((ev) => ev.type === 'status')!.run_id;
    expect((await getRun(store, runId))!.config.model.base_model).toBe('spindle-base');
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'status', status: 'starting', message: 'training base model spindle-base' }),
    );
  });

  it('keeps memory flat across runs on the imported model: three runs, the same tensor count after each', async () => {
    const e = engine();
    const info = await e.importModel({ files: modelFiles() });
    const config = structuredClone(DEFAULT_CONFIG);
    config.model.base_model = info.base_model;
    Object.assign(config.training, {
      max_steps: 1,
      group_size: 2,
      batch_size: 1,
      grad_accum_steps: 1,
      eval_at_start: false,
      eval_interval: 100,
    });
    Object.assign(config.trajectory_collection, { n_workers: 1, max_steps_per_trajectory: 1 });
    Object.assign(config.lora, { r: 2, alpha: 4 });
    config.sampling.max_new_tokens = 8;
    config.safety.enabled = false;
    config.tasks.environments = ['arith_tool'];
    const counts: number[] = [];
    for (const name of ['flat-1', 'flat-2', 'flat-3']) {
      const finished = new Promise<void>((resolve, reject) => {
        const id = e.subscribe((event) => {
          if (event.type !== 'status' || !['finished', 'error'].includes(event.status)) return;
          e.unsubscribe(id);
          if (event.status === 'finished') resolve();
          else reject(new Error(event.message ?? 'run failed'));
        });
      });
      await e.start({ ...config, name });
      await finished;
      counts.push(tf.memory().numTensors);
    }
    // The first run may leave what every run shares (the import's tensors, freed once); after it, nothing grows.
    expect(counts[2]).toBe(counts[1]);
  }, 120_000);

  it('imports by hub id through the cache with progress, names the run base hf:<id>@<rev>, and a second import downloads nothing', async () => {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url!);
      const m = /^\/test-org\/tiny\/resolve\/v1\/([\w.]+)$/.exec(req.url!);
      const files: Record<string, Blob> = {
        ...modelFiles(),
        'README.md': new Blob(['---\nlicense: apache-2.0\n---\n# Tiny\n\nA tiny test model.\n']),
      };
      if (!m || !files[m[1]]) return void res.writeHead(404).end();
      void files[m[1]]
        .arrayBuffer()
        .then((bytes) => res.writeHead(200, { 'content-length': bytes.byteLength }).end(Buffer.from(bytes)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kept = new Map<string, Uint8Array>();
    const cache: DownloadCache = {
      get: async (k) => kept.get(k) ?? null,
      put: async (k, b) => void kept.set(k, b),
      getPartial: async () => null,
      putPartial: async () => {},
      deletePartial: async () => {},
    };
    try {
      const e = new Engine({ ...engineDeps(), hubCache: () => cache });
      await e.init({ hubEndpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const progress: DownloadProgress[] = [];
      const info = await e.importModel({ hub: 'test-org/tiny@v1' }, (p) => progress.push(p));
      expect(info).toMatchObject({ name: 'test-org/tiny', base_model: 'hf:test-org/tiny@v1', family: 'llama' });
      // The repository's README follows Spindle's summary; its front matter stays first.
      expect(info.card).toMatch(/^---\nlicense: apache-2\.0\n---\n\n# test-org\/tiny\n/);
      expect(info.card).toMatch(
        /`model.base_model: hf:test-org\/tiny@v1`[\s\S]*## The repository's model card\n\n# Tiny\n\nA tiny test model\./,
      );
      expect(progress.filter((p) => p.file === 'model.safetensors').at(-1)).toMatchObject({
        loaded: expect.any(Number),
        total: expect.any(Number),
      });
      const weights = progress.filter((p) => p.file === 'model.safetensors').at(-1)!;
      expect(weights.loaded).toBe(weights.total);
      const fetched = requests.length;
      await e.importModel({ hub: 'hf:test-org/tiny@v1' });
      expect(requests.length).toBe(fetched);
      // A merge for a run on that base finds the import by its hub name.
      const lora = (ab: string, shape: number[]) =>
        [
          `base_model.model.model.layers.0.self_attn.q_proj.lora_${ab}.weight`,
          { shape, data: new Float32Array(shape[0] * shape[1]) },
        ] as const;
      const adapter = writeSafetensors(new Map([lora('A', [R, 32]), lora('B', [32, R])]), { format: 'pt' });
      const peft = {
        peft_type: 'LORA',
        task_type: 'CAUSAL_LM',
        r: R,
        lora_alpha: 4,
        lora_dropout: 0,
        bias: 'none',
        target_modules: ['q_proj'],
        base_model_name_or_path: 'test-org/tiny',
      } as PeftConfig;
      const merged = unzipSync(await e.mergedModelZip({ baseModel: 'hf:test-org/tiny@v1', adapter, peft }));
      expect(Object.keys(merged)).toContain('model.safetensors');
      // Named by its hub id: config.json's _name_or_path, the card's base_model.
      expect(JSON.parse(new TextDecoder().decode(merged['config.json']))._name_or_path).toBe('test-org/tiny');
      expect(new TextDecoder().decode(merged['README.md'])).toMatch(/^---\nbase_model: test-org\/tiny\n/);
      await expect(e.importModel({ hub: 'not a model id' })).rejects.toThrow(
        /not a Hugging Face model id; expected owner\/name/,
      );
      await expect(e.importModel({ hub: 'test-org/absent' })).rejects.toThrow(/config\.json/);
    } finally {
      server.close();
    }
  });

  it('exports base + LoRA merged as an HF-layout zip: W + (alpha / r) · B · A on the adapted weight only', async () => {
    const e = engine();
    await e.importModel({ files: modelFiles() });
    const A = Float32Array.from({ length: R * 32 }, (_, i) => ((i % 7) - 3) / 10); // [r, in]
    const B = Float32Array.from({ length: 32 * R }, (_, i) => ((i % 5) - 2) / 10); // [out, r]
    const key = (ab: string) => `base_model.model.model.layers.0.self_attn.q_proj.lora_${ab}.weight`;
    const adapter = writeSafetensors(
      new Map([
        [key('A'), { shape: [R, 32], data: A }],
        [key('B'), { shape: [32, R], data: B }],
      ]),
      { format: 'pt' },
    );
    const peft = {
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: R,
      lora_alpha: 4,
      lora_dropout: 0,
      bias: 'none',
      target_modules: ['q_proj'],
      base_model_name_or_path: 'tiny-test',
    } as PeftConfig;
    const zip = unzipSync(await e.mergedModelZip({ baseModel: 'tiny-test', adapter, peft }));
    // The import had no tokenizer files (the byte tokenizer's marker): the merge writes them, as every merge does.
    expect(Object.keys(zip).sort()).toEqual([
      'README.md',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    // Named as imported (its files' _name_or_path), not by the store's `imported:` name.
    expect(JSON.parse(new TextDecoder().decode(zip['config.json']))).toMatchObject({
      model_type: 'llama',
      spindle_tokenizer: 'byte',
      _name_or_path: 'tiny-test',
    });
    const merged = readSafetensors(zip['model.safetensors']).tensors;
    const base = readSafetensors(new Uint8Array(readFileSync(join(modelDir, 'model.safetensors')))).tensors;
    expect([...merged.keys()].sort()).toEqual([...base.keys()].sort());
    const [o, i] = [3, 5];
    const delta = (4 / R) * (B[o * R] * A[i] + B[o * R + 1] * A[32 + i]);
    expect(merged.get(Q)!.data[o * 32 + i]).toBeCloseTo(base.get(Q)!.data[o * 32 + i] + delta, 5);
    expect(merged.get('model.layers.0.self_attn.k_proj.weight')!.data).toEqual(
      base.get('model.layers.0.self_attn.k_proj.weight')!.data,
    );

    await expect(e.mergedModelZip({ baseModel: 'imported:other', adapter, peft })).rejects.toThrow(
      /not loaded in this tab/,
    );
  });
});
