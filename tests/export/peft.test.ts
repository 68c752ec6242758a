import { describe, expect, it } from 'vitest';
import { unzipSync, strFromU8, zipSync, strToU8 } from 'fflate';
import { parse as parseYaml } from 'yaml';
import {
  adapterZip,
  readAdapter,
  peftAdapterConfig,
  peftConfigFromRun,
  mergeAdapterWeights,
  mergedModelFiles,
  modelCard,
  moduleShape,
  ADAPTER_WEIGHTS,
  ADAPTER_CONFIG,
  type PeftConfig,
} from '../../src/export/peft.ts';
import { ImportError } from '../../src/export/import-error.ts';
import { presetConfig } from '../../src/model/config.ts';
import { readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';
import type { HostTensors } from '../../src/model/transformer.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';

const nano = presetConfig('nano', 266);
const run = {
  ...DEFAULT_CONFIG,
  name: 'unit',
  model: { ...DEFAULT_CONFIG.model, base_model: 'spindle-nano' },
  lora: { ...DEFAULT_CONFIG.lora, r: 4, alpha: 8, target_modules: ['q_proj', 'v_proj', 'down_proj'] },
};
const config = peftConfigFromRun(run);

function fakeAdapter(c = nano, r = 4, modules = ['q_proj', 'v_proj', 'down_proj']): HostTensors {
  const out: HostTensors = new Map();
  let seed = 1;
  const fill = (n: number) =>
    Float32Array.from({ length: n }, () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5);
  for (let layer = 0; layer < c.numLayers; layer++) {
    for (const m of modules) {
      const [o, i] = moduleShape(c, m);
      const parent = m.endsWith('proj') && ['gate_proj', 'up_proj', 'down_proj'].includes(m) ? 'mlp' : 'self_attn';
      const key = `base_model.model.model.layers.${layer}.${parent}.${m}`;
      out.set(`${key}.lora_A.weight`, { shape: [r, i], data: fill(r * i) });
      out.set(`${key}.lora_B.weight`, { shape: [o, r], data: fill(o * r) });
    }
  }
  return out;
}

describe('PEFT adapter export', () => {
  const tensors = fakeAdapter();
  const zip = adapterZip(tensors, {
    config,
    run,
    evals: [{ benchmark: 'arith_tool', step: 40, results: { success: 0.625 } }],
  });
  const files = unzipSync(zip);

  it('zips adapter_config.json, adapter_model.safetensors and a README model card', () => {
    expect(Object.keys(files).sort()).toEqual(['README.md', ADAPTER_CONFIG, ADAPTER_WEIGHTS].sort());
    expect(JSON.parse(strFromU8(files[ADAPTER_CONFIG]))).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 4,
      lora_alpha: 8,
      lora_dropout: 0,
      bias: 'none',
      target_modules: ['q_proj', 'v_proj', 'down_proj'],
      base_model_name_or_path: 'spindle-nano',
    });
    const readme = strFromU8(files['README.md']);
    expect(readme).toMatch(/^---\nbase_model: spindle-nano\nlibrary_name: peft/);
    expect(readme).toContain('| arith_tool | 40 | success=0.625 |');
    const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(readme)![1];
    expect(parseYaml(yamlBlock)).toEqual(run);
  });

  it('writes exact PEFT key names and shapes, F32, metadata {"format":"pt"}, header padded to 8 bytes', () => {
    const bytes = files[ADAPTER_WEIGHTS];
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    expect((8 + n) % 8).toBe(0);
    const header = JSON.parse(strFromU8(bytes.subarray(8, 8 + n)));
    expect(header.__metadata__).toEqual({ format: 'pt' });
    const names = Object.keys(header).filter((k) => k !== '__metadata__');
    expect(names).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    expect(names).toContain('base_model.model.model.layers.4.mlp.down_proj.lora_B.weight');
    expect(names.length).toBe(nano.numLayers * 3 * 2);
    expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toMatchObject({
      dtype: 'F32',
      shape: [4, nano.hiddenSize],
    });
    expect(header['base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight'].shape).toEqual([
      nano.numKvHeads * nano.headDim,
      4,
    ]);
    expect(header['base_model.model.model.layers.0.mlp.down_proj.lora_A.weight'].shape).toEqual([
      4,
      nano.intermediateSize,
    ]);
    let end = 0;
    for (const name of names) {
      expect(header[name].data_offsets[0]).toBe(end);
      end = header[name].data_offsets[1];
    }
    expect(8 + n + end).toBe(bytes.byteLength);
  });

  it('reads the zip back, checked against the base model', () => {
    const back = readAdapter(zip, 'adapter.zip', { baseModel: 'spindle-nano', modelConfig: nano });
    expect(back.config).toMatchObject(config);
    expect([...back.tensors.keys()]).toEqual([...tensors.keys()]);
    for (const [k, t] of tensors) expect(back.tensors.get(k)).toEqual(t);
    expect(back.readme).toContain('# unit');
  });
});

describe('PEFT adapter import is validated', () => {
  const tensors = fakeAdapter();
  const zip = adapterZip(tensors, { config });
  const files = new Map<string, Uint8Array>(Object.entries(unzipSync(zip)));
  const fail = (input: Uint8Array | Map<string, Uint8Array>, options = {}) => {
    try {
      readAdapter(input, 'adapter.zip', options);
    } catch (e) {
      expect(e).toBeInstanceOf(ImportError);
      return (e as Error).message;
    }
    throw new Error('expected an ImportError');
  };

  it('a truncated zip', () => {
    expect(fail(zip.subarray(0, zip.byteLength - 40))).toMatch(
      /^adapter\.zip: not a readable zip archive, or truncated/,
    );
  });

  it('a truncated safetensors file names the tensor that runs past the end', () => {
    const w = files.get(ADAPTER_WEIGHTS)!;
    const cut = new Map(files).set(ADAPTER_WEIGHTS, w.subarray(0, w.byteLength - 100));
    expect(fail(cut)).toMatch(
      /^adapter\.zip: tensor base_model\.model\.model\.layers\.4\.mlp\.down_proj\.lora_B\.weight: .*offsets/,
    );
    expect(fail(new Map(files).set(ADAPTER_WEIGHTS, w.subarray(0, 5)))).toMatch(/too short for a safetensors header/);
  });

  it('an adapter for a different base: name mismatch and shape mismatch', () => {
    expect(fail(zip, { baseModel: 'Qwen/Qwen2.5-0.5B' })).toMatch(
      /field adapter_config\.json base_model_name_or_path: the adapter is for base model "spindle-nano", not "Qwen\/Qwen2\.5-0\.5B"/,
    );
    const micro = presetConfig('micro', 266);
    expect(fail(zip, { modelConfig: micro })).toMatch(
      /tensor base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight: shape \[4, 128\] does not fit the base model \(expected \[4, 256\]\)/,
    );
    const deep = adapterZip(fakeAdapter({ ...nano, numLayers: 7 }), { config });
    expect(fail(deep, { modelConfig: nano })).toMatch(
      /layers\.5\..*layer 5 does not exist: the base model has 5 layers/,
    );
  });

  it('wrong tensor names, ranks and missing partners', () => {
    const renamed: HostTensors = new Map(
      [...tensors].map(([k, v]) => [k.replace('base_model.model.model', 'model'), v]),
    );
    expect(fail(new Map(files).set(ADAPTER_WEIGHTS, writeSafetensors(renamed)))).toMatch(
      /tensor model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight: not a PEFT LoRA key/,
    );
    const rank8 = fakeAdapter(nano, 8);
    expect(fail(new Map(files).set(ADAPTER_WEIGHTS, writeSafetensors(rank8)))).toMatch(/rank 8 .* config says r = 4/);
    const lonely = new Map(tensors);
    lonely.delete('base_model.model.model.layers.2.self_attn.v_proj.lora_B.weight');
    expect(fail(new Map(files).set(ADAPTER_WEIGHTS, writeSafetensors(lonely)))).toMatch(
      /tensor base_model\.model\.model\.layers\.2\.self_attn\.v_proj\.lora_A\.weight: its partner .*lora_B\.weight is missing/,
    );
    const other = { ...config, target_modules: ['q_proj'] };
    expect(fail(new Map(files).set(ADAPTER_CONFIG, strToU8(JSON.stringify(other))))).toMatch(
      /module v_proj is not in target_modules \[q_proj\]/,
    );
    expect(fail(new Map(files).set(ADAPTER_CONFIG, strToU8('{"peft_type":"PREFIX_TUNING"}')))).toMatch(
      /peft_type must be "LORA"/,
    );
    const noWeights = zipSync({ [ADAPTER_CONFIG]: files.get(ADAPTER_CONFIG)!, 'adapter_model.bin': new Uint8Array(4) });
    expect(fail(noWeights)).toMatch(/adapter_model\.safetensors is missing \(only the legacy adapter_model\.bin/);
  });
});

describe('merged full weights', () => {
  it('folds W + (alpha/r)·B·A into the matching base weight, leaving the inputs untouched', () => {
    const W = { shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) };
    const base: HostTensors = new Map([
      ['model.layers.0.self_attn.q_proj.weight', W],
      ['model.norm.weight', { shape: [3], data: new Float32Array([1, 1, 1]) }],
    ]);
    const A = { shape: [1, 3], data: new Float32Array([1, 0, -1]) };
    const B = { shape: [2, 1], data: new Float32Array([2, 3]) };
    const adapter: HostTensors = new Map([
      ['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', A],
      ['base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight', B],
    ]);
    const cfg: PeftConfig = { ...config, r: 1, lora_alpha: 2 };
    const merged = mergeAdapterWeights(base, adapter, cfg);
    // scale 2: row 0 += 2·2·[1,0,-1], row 1 += 2·3·[1,0,-1]
    expect(Array.from(merged.get('model.layers.0.self_attn.q_proj.weight')!.data)).toEqual([5, 2, -1, 10, 5, 0]);
    expect(Array.from(W.data)).toEqual([1, 2, 3, 4, 5, 6]);
    const files = mergedModelFiles(
      base,
      adapter,
      cfg,
      { architectures: ['LlamaForCausalLM'] },
      { 'tokenizer.json': '{}' },
    );
    expect([...files.keys()]).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);
    const { tensors, metadata } = readSafetensors(files.get('model.safetensors')!);
    expect(metadata).toEqual({ format: 'pt' });
    expect(Array.from(tensors.get('model.layers.0.self_attn.q_proj.weight')!.data)).toEqual([5, 2, -1, 10, 5, 0]);
    expect(JSON.parse(strFromU8(files.get('config.json')!)).architectures).toEqual(['LlamaForCausalLM']);
  });
});

describe('with the real model (src/model)', () => {
  it('an exported adapter loads back into a fresh model, and the merged weights alone give the adapted model', async () => {
    const { initBackend } = await import('../../src/kernels/backend.ts');
    const { TransformerModel } = await import('../../src/model/transformer.ts');
    const { attachLora, exportLora, importLora } = await import('../../src/model/lora.ts');
    const tf = await import('@tensorflow/tfjs');
    await initBackend({ forced: 'cpu' });
    const lora = { r: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj', 'down_proj'] };
    const model = TransformerModel.create(nano, 3);
    const baseWeights = await model.getWeights();
    attachLora(model, lora);
    importLora(model, fakeAdapter()); // non-zero B so the merge matters
    const liveConfig = peftAdapterConfig(model, 'spindle-nano') as PeftConfig;
    // One adapter_config.json writer: the live adapters and a run config of the same shape say the same thing.
    const sameRun = {
      ...run,
      model: { ...run.model, base_model: 'spindle-nano' },
      lora: { ...run.lora, r: 4, alpha: 8, dropout: 0, target_modules: ['q_proj', 'v_proj', 'down_proj'] },
    };
    expect(peftConfigFromRun(sameRun)).toEqual(liveConfig);
    const zip = adapterZip(await exportLora(model), { config: liveConfig });

    const { config: cfg, tensors } = readAdapter(zip, 'a.zip', { baseModel: 'spindle-nano', modelConfig: nano });
    const fresh = TransformerModel.create(nano, 4);
    attachLora(fresh, lora);
    importLora(fresh, tensors);
    for (const [k, t] of await exportLora(fresh)) expect(Array.from(t.data)).toEqual(Array.from(tensors.get(k)!.data));

    // The merged export's fold (W + alpha/r · B·A), with no adapters left, computes what the adapted model does.
    const merged = TransformerModel.create(nano, 5);
    merged.setWeights(mergeAdapterWeights(baseWeights, tensors, cfg), 'merged');
    const logits = (m: typeof model) => {
      const t = tf.tidy(() => m.forward([[1, 5, 9, 2, 7, 3]]).logits);
      const values = Array.from(t.dataSync());
      t.dispose();
      return values;
    };
    const [adapted, folded] = [logits(model), logits(merged)];
    expect(merged.lora).toBeNull();
    expect(Math.max(...adapted.map((v, i) => Math.abs(v - folded[i])))).toBeLessThan(1e-4);
    model.dispose();
    fresh.dispose();
    merged.dispose();
  });
});

describe('the base an adapter names', () => {
  it('is the hub id and revision for a hub model and the shipped folder for spindle-base, so PeftModel finds it', () => {
    const run = (base_model: string) =>
      peftConfigFromRun({ ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_model } });
    expect(run('hf:Qwen/Qwen3-0.6B@c1899de')).toMatchObject({
      base_model_name_or_path: 'Qwen/Qwen3-0.6B',
      revision: 'c1899de',
    });
    expect(run('https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/resolve/main/')).toMatchObject({
      base_model_name_or_path: 'HuggingFaceTB/SmolLM2-135M-Instruct',
      revision: null,
    });
    expect(run('spindle-base')).toMatchObject({ base_model_name_or_path: 'models/spindle-base', revision: null });
    expect(modelCard({ config: run('hf:Qwen/Qwen3-0.6B@c1899de') })).toContain(
      'AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B", revision="c1899de")',
    );
  });
});
