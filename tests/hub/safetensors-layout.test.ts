/**
 * The safetensors reader accepts a file only when its tensors tile the data exactly, as the reference
 * reader does: trailing bytes (a torn or spliced download), a gap or an overlap between tensors are
 * refused by name, by `readSafetensors` and by the header-only `checkSafetensorsLayout`.
 */
import { describe, expect, it } from 'vitest';
import { checkSafetensorsLayout, readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';

/** A safetensors file with this header and `dataBytes` zero bytes of data. */
function file(header: Record<string, unknown>, dataBytes: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}
const f32 = (n: number, begin: number) => ({ dtype: 'F32', shape: [n], data_offsets: [begin, begin + 4 * n] });

describe('safetensors layout', () => {
  const good = writeSafetensors(
    new Map([
      ['a', { shape: [2], data: new Float32Array([1, 2]) }],
      ['b', { shape: [3], data: new Float32Array([3, 4, 5]) }],
    ]),
  );

  it('reads a file whose tensors cover its data exactly', () => {
    expect([...readSafetensors(good).tensors.keys()]).toEqual(['a', 'b']);
    expect(() => checkSafetensorsLayout(good, 'x')).not.toThrow();
    expect(() => readSafetensors(file({ a: f32(0, 0) }, 0))).not.toThrow(); // an empty tensor
  });

  it('refuses trailing bytes, naming the file and how many', () => {
    const spliced = new Uint8Array(good.length + 16);
    spliced.set(good);
    for (const read of [readSafetensors, checkSafetensorsLayout]) {
      expect(() => read(spliced, 'model.safetensors')).toThrow(
        /^model\.safetensors: holds 16 bytes after its last tensor \(the header describes \d+ bytes, the file has \d+\); the file is damaged or two downloads were spliced\.$/,
      );
    }
  });

  it('refuses a gap or an overlap between tensors', () => {
    expect(() => readSafetensors(file({ a: f32(1, 0), b: f32(1, 8) }, 12), 'gap')).toThrow(
      /^gap: tensor "b" starts at data byte 8 but the tensors before it end at 4/,
    );
    expect(() => readSafetensors(file({ a: f32(2, 0), b: f32(2, 4) }, 12), 'overlap')).toThrow(
      /tensor "b" starts at data byte 4 but the tensors before it end at 8/,
    );
  });
});
