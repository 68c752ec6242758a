/** 16-bit weights on the host (src/kernels/half.ts): conversions both ways, and the packing the WebGPU kernel reads. */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { fromHalfBits, packHalf, toHalfBits, unpackHalf, type HalfFormat } from '../../src/kernels/half.ts';

const everyPattern = Uint16Array.from({ length: 65536 }, (_, i) => i);
const isNaNPattern = (bits: number, format: HalfFormat) =>
  format === 'f16' ? (bits & 0x7c00) === 0x7c00 && bits & 0x3ff : (bits & 0x7f80) === 0x7f80 && bits & 0x7f;

describe('half.ts', () => {
  for (const format of ['f16', 'bf16'] as const) {
    it(`${format}: every one of the 65,536 bit patterns widens and rounds back to itself (NaNs stay NaN)`, () => {
      const back = toHalfBits(fromHalfBits(everyPattern, format), format);
      for (let i = 0; i < 65536; i++) {
        if (isNaNPattern(i, format)) expect(isNaNPattern(back[i], format), `pattern ${i}`).toBeTruthy();
        else if (back[i] !== i) expect(back[i], `pattern ${i}`).toBe(i);
      }
    });
  }

  it('rounds to the nearest value, ties to even, and overflows f16 to infinity', () => {
    const f16 = (v: number) => fromHalfBits(toHalfBits(Float32Array.of(v), 'f16'), 'f16')[0];
    const bf16 = (v: number) => fromHalfBits(toHalfBits(Float32Array.of(v), 'bf16'), 'bf16')[0];
    expect(f16(1 + 2 ** -11)).toBe(1); // halfway between 1 and 1 + 2⁻¹⁰: to the even one
    expect(f16(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(f16(1 + 2 ** -11 + 2 ** -20)).toBe(1 + 2 ** -10);
    expect(f16(70000)).toBe(Infinity);
    expect(f16(2 ** -24)).toBe(2 ** -24); // the smallest subnormal
    expect(bf16(1 + 2 ** -8)).toBe(1);
    expect(bf16(1 + 3 * 2 ** -8)).toBe(1 + 2 ** -6);
    expect(bf16(3e38)).toBeCloseTo(3e38, -36);
  });

  it('packs two values per word along a row and unpacks them again', async () => {
    await tf.setBackend('cpu');
    const bits = Uint16Array.from({ length: 12 }, (_, i) => 0x3c00 + i);
    const packed = packHalf(bits, 3, 4);
    expect(packed.shape).toEqual([3, 2]);
    const words = packed.dataSync();
    expect(words[0] & 0xffff).toBe(bits[0]);
    expect(words[0] >>> 16).toBe(bits[1]);
    expect(Array.from(await unpackHalf(packed))).toEqual(Array.from(bits));
    expect(() => packHalf(new Uint16Array(9), 3, 3)).toThrow(/even/);
  });
});
