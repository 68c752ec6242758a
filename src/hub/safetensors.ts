/**
 * safetensors (huggingface/safetensors): an 8-byte little-endian header length N, N bytes of JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}`, then the
 * raw little-endian C-order data, offsets relative to its start.
 *
 * Reads F32, F16 and BF16 (converted to float32); writes F32 with the header padded with spaces to
 * an 8-byte boundary, as the reference writer does. Every malformed input is a SafetensorsError
 * naming the tensor and what was expected. Like the reference reader, the tensors must tile the data
 * exactly (no gap, no overlap, no trailing bytes): a file with bytes left over is a torn or spliced
 * download, not a model.
 */
import { fromHalfBits } from '../kernels/half.ts';
import type { HostTensors } from '../model/transformer.ts';

export interface SafetensorsFile {
  tensors: HostTensors;
  metadata: Record<string, string>;
}

/** A file that is not valid safetensors: names the file, the tensor when there is one, and the problem. */
export class SafetensorsError extends Error {
  constructor(
    readonly source: string,
    readonly problem: string,
    readonly tensor?: string,
  ) {
    super(`${source}: ${tensor !== undefined ? `tensor "${tensor}" ` : ''}${problem}.`);
    this.name = 'SafetensorsError';
  }
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };
/** The reference implementation refuses headers over 100 MB. */
export const MAX_HEADER_BYTES = 100_000_000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

interface Entry {
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
  count: number;
}

/**
 * Reads a safetensors file. Every malformed header (wrong types, shapes, offsets past the data, sizes
 * that do not match, data that the tensors do not cover exactly) is a SafetensorsError before anything
 * is allocated for the tensors, so no header can make the reader allocate more than the file holds.
 */
export function readSafetensors(input: ArrayBuffer | Uint8Array, source = 'safetensors'): SafetensorsFile {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const { entries, metadata, dataStart } = parseLayout(bytes, source);
  const tensors: HostTensors = new Map();
  for (const [name, e] of entries)
    tensors.set(name, { shape: e.shape, data: decode(bytes, dataStart + e.begin, e.count, e.dtype) });
  return { tensors, metadata };
}

/**
 * Checks a safetensors file's header and that its tensors tile the data to the last byte, without
 * decoding any tensor: cheap enough to run on every read of a cached download.
 */
export function checkSafetensorsLayout(bytes: Uint8Array, source = 'safetensors'): void {
  parseLayout(bytes, source);
}

function parseLayout(
  bytes: Uint8Array,
  source: string,
): { entries: [string, Entry][]; metadata: Record<string, string>; dataStart: number } {
  const fail = (problem: string, tensor?: string) => new SafetensorsError(source, problem, tensor);
  if (bytes.length < 8) throw fail(`file is ${bytes.length} bytes, too short for a safetensors header`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(Math.min(bytes.length - 8, MAX_HEADER_BYTES))) {
    throw fail(
      `header length ${headerLength} runs past the end of the file (${bytes.length} bytes) or over ${MAX_HEADER_BYTES} bytes; is this a safetensors file?`,
    );
  }
  const dataStart = 8 + Number(headerLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, dataStart)));
  } catch (err) {
    throw fail(`header is not valid JSON (${(err as Error).message})`);
  }
  if (!isRecord(header)) throw fail('header must be a JSON object of tensor entries');
  const dataLength = bytes.length - dataStart;
  const metadata = header.__metadata__ ?? {};
  if (!isRecord(metadata) || !Object.values(metadata).every((v) => typeof v === 'string'))
    throw fail('"__metadata__" must be an object of strings');

  const entries: [string, Entry][] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (!isRecord(raw)) throw fail('entry must be an object with dtype, shape and data_offsets', name);
    const { dtype, shape, data_offsets: offsets } = raw;
    const width = typeof dtype === 'string' && Object.hasOwn(BYTES, dtype) ? BYTES[dtype] : 0;
    if (!width)
      throw fail(
        `has dtype ${typeof dtype === 'string' ? dtype : JSON.stringify(dtype)}; supported: ${Object.keys(BYTES).join(', ')}`,
        name,
      );
    if (!Array.isArray(shape) || !shape.every(isCount))
      throw fail(`has shape ${JSON.stringify(shape)}; expected a list of non-negative integers`, name);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount))
      throw fail(`has data_offsets ${JSON.stringify(offsets)}; expected [begin, end] byte offsets`, name);
    const [begin, end] = offsets as [number, number];
    // Multiply with a running bound, so a shape like [1e9, 1e9] cannot overflow into a small number.
    let count = 1;
    for (const d of shape as number[]) count = Math.min(count * d, Number.MAX_SAFE_INTEGER);
    if (!(begin <= end && end <= dataLength && end - begin === count * width)) {
      throw fail(
        `offsets [${begin}, ${end}] do not fit shape [${shape.join(', ')}] × ${width} bytes within ${dataLength} data bytes`,
        name,
      );
    }
    entries.push([name, { dtype: dtype as string, shape: (shape as number[]).slice(), begin, end, count }]);
  }
  // In offset order, each tensor starts where the previous one ended and the last ends at the file's end.
  let covered = 0;
  for (const [name, e] of [...entries].sort((a, b) => a[1].begin - b[1].begin || a[1].end - b[1].end)) {
    if (e.begin !== covered)
      throw fail(
        `starts at data byte ${e.begin} but the tensors before it end at ${covered}; tensors must follow each other without gaps or overlap`,
        name,
      );
    covered = e.end;
  }
  if (covered !== dataLength) {
    throw fail(
      `holds ${dataLength - covered} bytes after its last tensor (the header describes ${dataStart + covered} bytes, the file has ${bytes.length}); the file is damaged or two downloads were spliced`,
    );
  }
  return { entries, metadata: metadata as Record<string, string>, dataStart };
}

/**
 * Refuses weights holding NaN or ±Infinity, naming the first such tensor and index: such weights load
 * and run, but every output they produce is NaN (an eval would report 0% instead of an error).
 */
export function assertFiniteTensors(tensors: HostTensors, source: string): void {
  for (const [name, t] of tensors) {
    const i = t.data.findIndex((v) => !Number.isFinite(v));
    if (i !== -1)
      throw new SafetensorsError(
        source,
        `holds ${t.data[i]} at index ${i}; weights must be finite numbers (was the model saved after a diverged update?)`,
        name,
      );
  }
}

function decode(bytes: Uint8Array, offset: number, count: number, dtype: string): Float32Array {
  // Copy through Uint8Array.prototype.slice: a Node Buffer's own slice() is a view, whose .buffer is the whole file.
  const copy = Uint8Array.prototype.slice.call(bytes, offset, offset + count * BYTES[dtype]).buffer as ArrayBuffer;
  if (dtype === 'F32') return new Float32Array(copy); // hosts are little-endian, like the file
  return fromHalfBits(new Uint16Array(copy), dtype === 'BF16' ? 'bf16' : 'f16');
}

/** F32 safetensors of the given tensors, in insertion order. */
export function writeSafetensors(tensors: HostTensors, metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(
        `writeSafetensors: tensor "${name}" has ${t.data.length} values but shape [${t.shape.join(', ')}].`,
      );
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
