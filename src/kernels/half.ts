/**
 * 16-bit weights: IEEE half (f16) and bfloat16 (bf16) values as raw bits, converted to and from
 * float32 on the host, and packed two to a 32-bit word for WebGPU's half-weight matmul
 * (webgpu/half-matmul.ts): element n of a row in the low half of word n/2 when n is even, the high
 * half when odd (little-endian, like the hosts Spindle runs on).
 */
import * as tf from '@tensorflow/tfjs';

export type HalfFormat = 'f16' | 'bf16';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** An f16 value's bits as a number. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * Math.pow(2, -14) * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * Math.pow(2, exponent - 15) * (1 + fraction / 1024);
}

/** The nearest f16 (round half to even; overflow to ±Infinity, subnormals kept). */
function floatToHalf(v: number): number {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = mantissa | 0x800000;
    const shift = 14 - e;
    const half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

/** The nearest bf16 (round half to even). */
function floatToBfloat(v: number): number {
  f32[0] = v;
  const x = u32[0];
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return (x >>> 16) | 0x40; // NaN stays NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

export function toHalfBits(values: Float32Array, format: HalfFormat): Uint16Array {
  const convert = format === 'f16' ? floatToHalf : floatToBfloat;
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = convert(values[i]);
  return out;
}

export function fromHalfBits(bits: Uint16Array, format: HalfFormat): Float32Array {
  const out = new Float32Array(bits.length);
  if (format === 'f16') {
    for (let i = 0; i < bits.length; i++) out[i] = halfToFloat(bits[i]);
  } else {
    for (let i = 0; i < bits.length; i++) {
      u32[0] = bits[i] << 16; // bfloat16 is the top half of a float32
      out[i] = f32[0];
    }
  }
  return out;
}

/** [K, N] half values (row-major, N even) → the int32 tensor [K, N/2] the WebGPU kernel reads. */
export function packHalf(bits: Uint16Array, K: number, N: number): tf.Tensor2D {
  if (N % 2 !== 0) throw new Error(`packHalf: N = ${N} must be even (two halves per word)`);
  if (bits.length !== K * N) throw new Error(`packHalf: ${bits.length} values for [${K}, ${N}]`);
  return tf.tensor2d(
    new Int32Array(bits.buffer.slice(bits.byteOffset, bits.byteOffset + bits.byteLength)),
    [K, N / 2],
    'int32',
  );
}

/** packHalf's tensor back to its [K, N] half values. */
export async function unpackHalf(packed: tf.Tensor): Promise<Uint16Array> {
  const words = (await packed.data()) as Int32Array;
  return new Uint16Array(words.buffer, words.byteOffset, words.length * 2).slice();
}
