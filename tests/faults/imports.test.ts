/**
 * Faults: files from elsewhere (models, adapters, configs) that are corrupt or hostile. Each is refused
 * with a named error that says what is wrong, before anything large is allocated; nothing loads half-way.
 * Where "at once" is the point, the test's timeout is the bound (vitest fails a test that returns past it).
 */
import { strToU8, zipSync } from 'fflate';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseRunConfigYaml } from '../../src/config/yaml.ts';
import { ImportError } from '../../src/export/import-error.ts';
import { readAdapter } from '../../src/export/peft.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { loadHfModel, saveModel } from '../../src/hub/hf.ts';
import { readSafetensors, SafetensorsError, writeSafetensors } from '../../src/hub/safetensors.ts';
import { TransformerModel, type HostTensors } from '../../src/model/transformer.ts';
import { useBackend } from '../model/helpers.ts';

const BOUND_MS = 5000;

function withHeader(header: unknown, data = new Uint8Array(16)): Uint8Array {
  const json = strToU8(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe('malformed safetensors headers are named errors', () => {
  const cases: Record<string, Uint8Array> = {
    'header of null': withHeader('null'),
    'header that is a list': withHeader([1, 2]),
    'entry that is a number': withHeader({ w: 3 }),
    'shape missing': withHeader({ w: { dtype: 'F32', data_offsets: [0, 4] } }),
    'shape of strings': withHeader({ w: { dtype: 'F32', shape: ['4'], data_offsets: [0, 16] } }),
    'negative dimension': withHeader({ w: { dtype: 'F32', shape: [-4], data_offsets: [0, 16] } }),
    'offsets not a pair': withHeader({ w: { dtype: 'F32', shape: [4], data_offsets: 16 } }),
    'offsets past the data': withHeader({ w: { dtype: 'F32', shape: [4], data_offsets: [8, 24] } }),
    'a shape of 1e9 × 1e9': withHeader({ w: { dtype: 'F32', shape: [1e9, 1e9], data_offsets: [0, 16] } }),
    'metadata of numbers': withHeader({ __metadata__: { format: 1 } }),
    'header length of 2^63': (() => {
      const b = withHeader({});
      new DataView(b.buffer).setBigUint64(0, 1n << 63n, true);
      return b;
    })(),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    it(what, () => {
      expect(() => readSafetensors(bytes, 'bad.safetensors')).toThrow(SafetensorsError);
      expect(() => readSafetensors(bytes, 'bad.safetensors')).toThrow(/^bad\.safetensors: /);
    });
  }
});

describe('model and adapter imports', () => {
  beforeAll(() => useBackend('cpu'));

  async function modelFiles(): Promise<Map<string, Uint8Array>> {
    const model = TransformerModel.create(
      presetConfig('nano', 266, {
        hiddenSize: 16,
        intermediateSize: 32,
        numLayers: 2,
        numHeads: 2,
        numKvHeads: 1,
        headDim: 8,
        maxPositions: 32,
      }),
      1,
    );
    try {
      return await saveModel(model, new ByteTokenizer());
    } finally {
      model.dispose();
    }
  }
  const source = (files: Map<string, Uint8Array>) => ({
    description: 'test files',
    read: async (name: string) => files.get(name) ?? null,
  });

  it('weights holding NaN or Infinity are refused, naming the tensor', async () => {
    const files = await modelFiles();
    const weights = readSafetensors(files.get('model.safetensors')!).tensors;
    weights.get('model.layers.1.mlp.up_proj.weight')!.data[5] = NaN;
    files.set('model.safetensors', writeSafetensors(weights));
    await expect(loadHfModel(source(files))).rejects.toThrow(
      /tensor "model\.layers\.1\.mlp\.up_proj\.weight" holds NaN at index 5/,
    );
    weights.get('model.layers.1.mlp.up_proj.weight')!.data[5] = 0;
    weights.get('model.norm.weight')!.data[0] = -Infinity;
    files.set('model.safetensors', writeSafetensors(weights));
    await expect(loadHfModel(source(files))).rejects.toThrow(/tensor "model\.norm\.weight" holds -Infinity/);
  });

  it(
    'a config claiming 100,000 layers fails at once against the file, before allocating',
    { timeout: BOUND_MS },
    async () => {
      const files = await modelFiles();
      const config = JSON.parse(new TextDecoder().decode(files.get('config.json')!)) as Record<string, unknown>;
      files.set('config.json', strToU8(JSON.stringify({ ...config, num_hidden_layers: 100_000 })));
      await expect(loadHfModel(source(files))).rejects.toThrow(
        /tensor "model\.layers\.2\.input_layernorm\.weight" is missing .*100000 layers/,
      );
      files.set('config.json', strToU8(JSON.stringify({ ...config, max_position_embeddings: 1e9 })));
      await expect(loadHfModel(source(files))).rejects.toThrow(
        /max_position_embeddings 1000000000 .* lower max_position_embeddings/,
      );
    },
  );

  const adapterConfig = strToU8(
    JSON.stringify({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 2, lora_alpha: 4, target_modules: ['q_proj'] }),
  );
  const loraA = 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight';

  it('an adapter of NaNs is refused, naming the tensor', () => {
    const tensors: HostTensors = new Map([[loraA, { shape: [2, 16], data: new Float32Array(32).fill(NaN) }]]);
    const zip = zipSync({
      'adapter_config.json': adapterConfig,
      'adapter_model.safetensors': writeSafetensors(tensors),
    });
    expect(() => readAdapter(zip, 'nan.zip')).toThrow(ImportError);
    expect(() => readAdapter(zip, 'nan.zip')).toThrow(
      /tensor base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight: .*holds NaN at index 0/,
    );
  });

  /** Sets the inflated size that the zip's central directory declares for its entry `name`. */
  function declareSize(zip: Uint8Array, name: string, size: number): Uint8Array {
    const out = zip.slice();
    const view = new DataView(out.buffer);
    for (let at = out.length - 22; at >= 0; at--) {
      if (view.getUint32(at, true) !== 0x02014b50) continue; // central directory entry
      const nameLength = view.getUint16(at + 28, true);
      if (new TextDecoder().decode(out.subarray(at + 46, at + 46 + nameLength)) === name)
        view.setUint32(at + 24, size, true);
    }
    return out;
  }

  it('a zip entry declaring 1 GiB is refused before inflating; one lying small inflates only that much', () => {
    const weights = writeSafetensors(new Map([[loraA, { shape: [2, 16], data: new Float32Array(32) }]]));
    const zip = zipSync({
      'adapter_config.json': adapterConfig,
      'adapter_model.safetensors': new Uint8Array(8 << 20).fill(0).map((_, i) => weights[i] ?? 0),
    });
    expect(() => readAdapter(declareSize(zip, 'adapter_model.safetensors', 2 ** 30), 'bomb.zip')).toThrow(
      /adapter_model\.safetensors would inflate to 1073741824 bytes, over the \d+-byte limit/,
    );
    expect(() => readAdapter(declareSize(zip, 'adapter_model.safetensors', 40), 'small.zip')).toThrow(
      /small\.zip: .*(header length|too short)/,
    );
  });
});

describe('bounded YAML run configs', () => {
  it('an alias bomb is refused with a line', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'name: [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    const r = parseRunConfigYaml(bomb);
    expect(r.config).toBeNull();
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].message).toMatch(/aliases/);
    expect(r.errors[0].line).toBeGreaterThan(1);
  });

  it(
    '50,000 keys are refused at once; past 2,000 keys the error gives the line where the limit was passed',
    { timeout: BOUND_MS },
    () => {
      const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: 1`).join('\n');
      expect(parseRunConfigYaml(keys(50_000)).errors).toHaveLength(1);
      expect(parseRunConfigYaml(keys(3_000)).errors).toEqual([
        { path: '', line: 2001, message: expect.stringMatching(/more than 2000 keys/) },
      ]);
    },
  );

  it('a config of megabytes is refused by size', () => {
    expect(parseRunConfigYaml(`name: "${'x'.repeat(1 << 20)}"`).errors[0].message).toMatch(/at most 262144/);
  });
});
