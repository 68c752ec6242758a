/**
 * safetensors (huggingface/safetensors): an 8-byte little-endian header length N, N bytes of JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}`, then the
 * raw little-endian C-order data, offsets relative to its start.
 *
 * Reads F32, F16 and BF16 (converted to float32); writes F32 with the header padded with spaces to
 * an 8-byte boundary, as the reference writer does. Every malformed input is an error naming the
 * tensor and what was expected.
 */
import type { HostTensors } from './transformer.ts';

export interface SafetensorsFile {
  tensors: HostTensors;
  metadata: Record<string, string>;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

export function readSafetensors(input: ArrayBuffer | Uint8Array, source = 'safetensors'): SafetensorsFile {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.length < 8) throw new Error(`${source}: file is ${bytes.length} bytes, too short for a safetensors header.`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.length) {
    throw new Error(`${source}: header length ${headerLength} runs past the end of the file (${bytes.length} bytes); is this a safetensors file?`);
  }
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${source}: header is not valid JSON (${(err as Error).message}).`, { cause: err });
  }
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const metadata = (header.__metadata__ ?? {}) as Record<string, string>;
  const tensors: HostTensors = new Map();
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const entry = raw as HeaderEntry;
    const width = BYTES[entry.dtype];
    if (!width) throw new Error(`${source}: tensor "${name}" has dtype ${entry.dtype}; supported: ${Object.keys(BYTES).join(', ')}.`);
    const [begin, end] = entry.data_offsets ?? [];
    const count = entry.shape.reduce((a, b) => a * b, 1);
    if (!(begin >= 0 && end <= dataLength && end - begin === count * width)) {
      throw new Error(`${source}: tensor "${name}" offsets [${begin}, ${end}] do not fit shape [${entry.shape.join(', ')}] × ${width} bytes within ${dataLength} data bytes.`);
    }
    tensors.set(name, { shape: entry.shape.slice(), data: decode(bytes, dataStart + begin, count, entry.dtype) });
  }
  return { tensors, metadata };
}

function decode(bytes: Uint8Array, offset: number, count: number, dtype: string): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * BYTES[dtype]);
  const out = new Float32Array(count);
  // Copy through Uint8Array.prototype.slice: a Node Buffer's own slice() is a view, whose .buffer is the whole file.
  if (dtype === 'F32') return new Float32Array(Uint8Array.prototype.slice.call(bytes, offset, offset + count * 4).buffer); // hosts are little-endian, like the file
  if (dtype === 'BF16') {
    // bfloat16 is the top half of a float32.
    const word = new Uint32Array(1);
    const asFloat = new Float32Array(word.buffer);
    for (let i = 0; i < count; i++) {
      word[0] = view.getUint16(i * 2, true) << 16;
      out[i] = asFloat[0];
    }
  } else for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
  return out;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * Math.pow(2, -14) * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * Math.pow(2, exponent - 15) * (1 + fraction / 1024);
}

/** F32 safetensors of the given tensors, in insertion order. */
export function writeSafetensors(tensors: HostTensors, metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) throw new Error(`writeSafetensors: tensor "${name}" has ${t.data.length} values but shape [${t.shape.join(', ')}].`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + count * 4] };
    offset += count * 4;
  }
  let json = JSON.stringify(header);
  const encoder = new TextEncoder();
  const pad = (8 - (encoder.encode(json).length % 8)) % 8;
  json += ' '.repeat(pad);
  const headerBytes = encoder.encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const t of tensors.values()) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at); // little-endian host
    at += t.data.byteLength;
  }
  return out;
}
