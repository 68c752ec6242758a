/**
 * What the README's PEFT snippet does, checked in Node the way PEFT does it, on an adapter the shipped
 * model was fine-tuned into (`spindle sft`): `PeftModel.from_pretrained(base, folder)` reads
 * adapter_config.json into a LoraConfig, wraps every target module of every layer it names in the base
 * (found by the base's own config.json and weights), gives each a lora_A [r, in] and lora_B [out, r], and
 * loads adapter_model.safetensors into them by name. Here the files are read as those libraries read them
 * (the zip, the safetensors header, the base's config.json), not through Spindle's readers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../cli/helpers.ts';

const REPO = join(import.meta.dirname, '../..');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** A safetensors file's header as the safetensors library reads it: u64 LE length, JSON, then the data. */
function safetensorsHeader(bytes: Uint8Array): {
  tensors: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  metadata: unknown;
  dataBytes: number;
} {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, true));
  const { __metadata__: metadata, ...tensors } = JSON.parse(strFromU8(bytes.subarray(8, 8 + n))) as Record<
    string,
    never
  >;
  return { tensors, metadata, dataBytes: bytes.length - 8 - n };
}

/** LoraConfig's fields as PEFT checks them when it builds the config from adapter_config.json. */
function expectLoraConfig(c: Record<string, unknown>): void {
  expect(c).toMatchObject({
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    bias: 'none',
    fan_in_fan_out: false,
    use_dora: false,
  });
  expect(Number.isInteger(c.r) && (c.r as number) > 0).toBe(true);
  expect(typeof c.lora_alpha).toBe('number');
  expect(Array.isArray(c.target_modules) && (c.target_modules as string[]).length > 0).toBe(true);
  expect(
    c.layers_to_transform === null ||
      (Array.isArray(c.layers_to_transform) && c.layers_to_transform.every(Number.isInteger)),
  ).toBe(true);
}

/** [out, in] of a Llama-family projection, from the base's config.json alone (as transformers builds the nn.Linear). */
function linearShape(config: Record<string, number>, module: string): [number, number] {
  const hidden = config.hidden_size;
  const headDim = config.head_dim ?? hidden / config.num_attention_heads;
  const q = config.num_attention_heads * headDim;
  const kv = (config.num_key_value_heads ?? config.num_attention_heads) * headDim;
  const shapes: Record<string, [number, number]> = {
    q_proj: [q, hidden],
    k_proj: [kv, hidden],
    v_proj: [kv, hidden],
    o_proj: [hidden, q],
    gate_proj: [config.intermediate_size, hidden],
    up_proj: [config.intermediate_size, hidden],
    down_proj: [hidden, config.intermediate_size],
  };
  return shapes[module];
}

describe('an adapter of the shipped model, loaded the way PEFT loads it', () => {
  it('names a base that loads, and holds exactly the lora_A/lora_B tensors PEFT makes for that base, shaped to fit', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'rows.jsonl'),
      ['{"instruction":"Add 2 and 3","output":"5"}', '{"prompt":"Say hi","completion":"hi"}', ''].join('\n'),
    );
    const sft = await cli(dir, 'sft', '--data', 'rows.jsonl', '--epochs', '1', '--output', 'out');
    expect(sft.code, sft.err).toBe(0);
    const files = unzipSync(new Uint8Array(readFileSync(join(dir, 'out', 'adapter.zip'))));
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['adapter_config.json', 'adapter_model.safetensors']));

    const config = JSON.parse(strFromU8(files['adapter_config.json'])) as Record<string, unknown>;
    expectLoraConfig(config);
    // The README's snippet loads the base it names, from the repository root.
    const base = config.base_model_name_or_path as string;
    expect(README).toContain(`AutoModelForCausalLM.from_pretrained("${base}")`);
    const baseConfig = JSON.parse(readFileSync(join(REPO, base, 'config.json'), 'utf8')) as Record<string, number> & {
      model_type: string;
    };
    expect(baseConfig.model_type).toBe('llama');
    const baseWeights = safetensorsHeader(new Uint8Array(readFileSync(join(REPO, base, 'model.safetensors'))));

    const layers =
      (config.layers_to_transform as number[] | null) ??
      Array.from({ length: baseConfig.num_hidden_layers }, (_, i) => i);
    const expected = new Map<string, number[]>();
    for (const layer of layers) {
      for (const module of config.target_modules as string[]) {
        const parent = ['gate_proj', 'up_proj', 'down_proj'].includes(module) ? 'mlp' : 'self_attn';
        const [out, inp] = linearShape(baseConfig, module);
        // The module PEFT wraps is in the base, with the shape its config gives.
        expect(baseWeights.tensors[`model.layers.${layer}.${parent}.${module}.weight`]?.shape).toEqual([out, inp]);
        expected.set(`base_model.model.model.layers.${layer}.${parent}.${module}.lora_A.weight`, [
          config.r as number,
          inp,
        ]);
        expected.set(`base_model.model.model.layers.${layer}.${parent}.${module}.lora_B.weight`, [
          out,
          config.r as number,
        ]);
      }
    }

    const adapter = safetensorsHeader(files['adapter_model.safetensors']);
    expect(adapter.metadata).toEqual({ format: 'pt' });
    // No missing and no unexpected key, each shaped as PEFT's module, its bytes where the header says.
    expect(Object.keys(adapter.tensors).sort()).toEqual([...expected.keys()].sort());
    let end = 0;
    for (const [name, t] of Object.entries(adapter.tensors)) {
      expect(t.dtype, name).toBe('F32');
      expect(t.shape, name).toEqual(expected.get(name));
      expect(t.data_offsets[1] - t.data_offsets[0], name).toBe(4 * t.shape[0] * t.shape[1]);
      end = Math.max(end, t.data_offsets[1]);
    }
    expect(end).toBe(adapter.dataBytes);
    expect(existsSync(join(REPO, base, 'tokenizer_config.json'))).toBe(true);
  });
});
