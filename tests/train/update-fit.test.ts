/**
 * An update never starts a micro-batch the memory estimate says will not fit on wasm's heap: it splits
 * micro-batches to single sequences first, and refuses a sequence that does not fit alone, naming the
 * longest that would (tfjs-wasm does not check its allocations; past the heap a run dies later, elsewhere).
 */
import { describe, expect, it } from 'vitest';
import { fromHfConfig } from '../../src/model/config.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import { fitMicroBatches, UpdateTooLarge, updateFitFor, type UpdateFit } from '../../src/train/update-fit.ts';
import { SMOLLM2_135M } from '../../bench/lib/smollm2.ts';
import { useBackend } from '../model/helpers.ts';

const seq = (n: number) => ({ tokens: new Array<number>(n).fill(1) });
/** 100 bytes a token, 10,000 available: 100 tokens fit in all. */
const linear: UpdateFit = { limitBytes: 10_000, peakBytes: (rows, length) => rows * length * 100 };

describe('fitting an update in memory', () => {
  it('keeps micro-batches that fit, splits one that does not, and refuses a sequence too long alone', () => {
    const small = [seq(30), seq(30), seq(30)];
    const large = [seq(40), seq(40), seq(40)];
    expect(fitMicroBatches([small, large], linear)).toEqual([small, [large[0]], [large[1]], [large[2]]]);
    const refused = (() => {
      try {
        fitMicroBatches([[seq(20), seq(150)]], linear);
      } catch (e) {
        return e;
      }
    })() as UpdateTooLarge;
    expect(refused).toBeInstanceOf(UpdateTooLarge);
    expect(refused.fitsLength).toBe(100);
    expect(refused.message).toMatch(/one sequence of 150 tokens.*at most 100 tokens per sequence fit/s);
  });

  it('on wasm, refuses a SmolLM2-135M-shaped float32 update at 8,192 tokens and keeps one at 256', async () => {
    await useBackend('wasm');
    const config = fromHfConfig(SMOLLM2_135M);
    const model = { config, recompute: 'auto', layers: [{ q_proj: { int8: null } }] } as unknown as TransformerModel;
    const fit = updateFitFor(model)!;
    expect(fitMicroBatches([[seq(256)]], fit)).toHaveLength(1);
    expect(() => fitMicroBatches([[seq(8192)]], fit)).toThrow(/at most \d+ tokens per sequence fit/);
  });
});
