/**
 * The tfjs transformer against an independent PyTorch implementation (tests/fixtures/model-parity.json,
 * made by tests/fixtures/make_model_fixture.py): logits, loss and gradients of every weight, and the
 * same with PEFT-layout LoRA adapters, on the cpu and wasm backends. The cases cover Llama (tied),
 * Qwen2 (q/k/v bias), Llama with attention_bias + mlp_bias and a transformers-5 llama3 rope_parameters,
 * and Qwen3 (q/k norms, rope_parameters only).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { fromHfConfig, type HfConfigJson } from '../../src/model/config.ts';
import { attachLora } from '../../src/model/lora.ts';
import { importLora } from '../../src/model/lora.ts';
import { crossEntropyLoss } from '../../src/model/logprobs.ts';
import { TARGET_MODULES, TransformerModel } from '../../src/model/transformer.ts';
import { expectClose, hostTensors, loadFixture, useBackend, type FixtureTensor } from './helpers.ts';

interface Case {
  config: HfConfigJson;
  tokens: number[][];
  weights: Record<string, FixtureTensor>;
  logits: FixtureTensor;
  loss: number;
  grads: Record<string, FixtureTensor>;
  lora: {
    r: number;
    alpha: number;
    target_modules: string[];
    tensors: Record<string, FixtureTensor>;
    logits: FixtureTensor;
    loss: number;
    grads: Record<string, FixtureTensor>;
  };
}
type Family = 'llama' | 'qwen2' | 'llama_bias' | 'qwen3';
const fixture = loadFixture<Record<Family, Case>>('model-parity.json');

/** Gradient of the loss for every variable, keyed by the variable's id. */
function gradsOf(
  model: TransformerModel,
  tokens: number[][],
  vars: tf.Variable[],
): { loss: number; grads: Map<number, Float32Array> } {
  const { value, grads } = tf.variableGrads(() => crossEntropyLoss(model, tokens), vars);
  const out = new Map<number, Float32Array>();
  for (const v of vars) out.set(v.id, new Float32Array(grads[v.name].dataSync()));
  const loss = value.dataSync()[0];
  value.dispose();
  tf.dispose(grads);
  return { loss, grads: out };
}

/** Transposes a [rows, cols] row-major array (HF [out, in] ↔ our [in, out]). */
function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

for (const backend of ['cpu', 'wasm'] as const) {
  describe(`parity with PyTorch on ${backend}`, () => {
    for (const family of ['llama', 'qwen2', 'llama_bias', 'qwen3'] as const) {
      const c = fixture[family];

      it(`${family}: logits, loss and every weight gradient match`, async () => {
        await useBackend(backend);
        const model = TransformerModel.fromWeights(fromHfConfig(c.config), hostTensors(c.weights));
        const logits = tf.tidy(() => model.forward(c.tokens).logits);
        expectClose(logits.dataSync(), c.logits.data, `${family} logits`);
        logits.dispose();

        const params = model.namedParameters().map((p) => ({ ...p, variable: p.variable! })); // all float32 here
        const { loss, grads } = gradsOf(
          model,
          c.tokens,
          params.map((p) => p.variable),
        );
        expect(loss).toBeCloseTo(c.loss, 4);
        for (const p of params) {
          const g = grads.get(p.variable.id)!;
          const [rows, cols] = p.variable.shape;
          expectClose(p.transposed ? transpose2d(g, rows, cols) : g, c.grads[p.name].data, `${family} grad ${p.name}`);
        }
        model.dispose();
      });

      it(`${family}: PEFT LoRA adapters give the reference logits, loss and adapter gradients`, async () => {
        await useBackend(backend);
        const model = TransformerModel.fromWeights(fromHfConfig(c.config), hostTensors(c.weights));
        attachLora(model, { r: c.lora.r, alpha: c.lora.alpha, dropout: 0, targetModules: c.lora.target_modules });
        importLora(model, hostTensors(c.lora.tensors));
        const logits = tf.tidy(() => model.forward(c.tokens).logits);
        expectClose(logits.dataSync(), c.lora.logits.data, `${family} LoRA logits`);
        logits.dispose();

        const adapters = model.layers.flatMap((layer) =>
          TARGET_MODULES.flatMap((m) => (layer[m].lora ? [{ name: layer[m].name, ...layer[m].lora! }] : [])),
        );
        const vars = adapters.flatMap((a) => [a.A, a.B]);
        expect(
          model
            .trainableVariables()
            .map((v) => v.id)
            .sort(),
        ).toEqual(vars.map((v) => v.id).sort());
        const { loss, grads } = gradsOf(model, c.tokens, vars);
        expect(loss).toBeCloseTo(c.lora.loss, 4);
        for (const a of adapters) {
          for (const [which, v] of [
            ['lora_A', a.A],
            ['lora_B', a.B],
          ] as const) {
            const key = `base_model.model.${a.name}.${which}.weight`;
            const [rows, cols] = v.shape;
            expectClose(transpose2d(grads.get(v.id)!, rows, cols), c.lora.grads[key].data, `${family} grad ${key}`);
          }
        }
        model.dispose();
      });
    }
  });
}
