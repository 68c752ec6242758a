/**
 * The run config's memory settings reach the model (src/train/model-setup.ts): `model.quantization: int8`
 * holds the frozen base in int8 for a LoRA run and is refused for full fine-tuning;
 * `training.gradient_checkpointing` becomes the model's recompute setting, on a fresh and a resumed run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import { prepareModel, prepareResumed } from '../../src/train/model-setup.ts';
import { tinyModel, useWasm } from './helpers.ts';

function config(
  quantization: RunConfig['model']['quantization'],
  r: number,
  checkpointing: RunConfig['training']['gradient_checkpointing'],
): RunConfig {
  const c = structuredClone(DEFAULT_CONFIG);
  c.model.quantization = quantization;
  c.lora.r = r;
  c.training.gradient_checkpointing = checkpointing;
  return c;
}

describe('memory settings from the run config', () => {
  beforeAll(useWasm);

  it('int8 quantizes the frozen base of a LoRA run; gradient_checkpointing sets recompute', () => {
    const model = tinyModel({ lora: false });
    const setup = prepareModel(model, config('int8', 4, 'on'));
    expect(model.quantized).toBe(true);
    expect(model.recompute).toBe('on');
    expect(model.layers[0].q_proj.weight).toBeNull();
    const resumed = tinyModel({ lora: false });
    prepareResumed(resumed, config('int8', 4, 'off'), setup);
    expect(resumed.quantized).toBe(true);
    expect(resumed.recompute).toBe('off');
    model.dispose();
    resumed.dispose();
  });

  it('none keeps float32; int8 with full fine-tuning is refused by name', () => {
    const plain = tinyModel({ lora: false });
    prepareModel(plain, config('none', 4, 'auto'));
    expect(plain.quantized).toBe(false);
    expect(plain.recompute).toBe('auto');
    const full = tinyModel({ lora: false });
    expect(() => prepareModel(full, config('int8', 0, 'auto'))).toThrow(
      /model.quantization: int8 holds the frozen base in 8 bits for LoRA; full fine-tuning \(lora.r 0\)/,
    );
    plain.dispose();
    full.dispose();
  });
});
