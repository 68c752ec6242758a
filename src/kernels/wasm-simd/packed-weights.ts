/**
 * Packed copies (gemm.ts's packStrips) of the weights a decoding step multiplies, made on first use
 * and freed with their tensor. A batch-1 step reads every weight once per token from memory; read from
 * panels in order it streams, where packing each weight again every call would read it twice.
 * XNNPACK, which tfjs-wasm otherwise sends these products to, keeps such a copy too (and frees it the
 * same way); this one serves any number of rows, with no call overhead around it.
 *
 * A tensor's buffer is never written after its kernel returns (a variable's assign takes a new one), so
 * a copy keyed by the buffer's dataId stays right until that buffer is disposed: the backend's
 * disposeData is wrapped once to free the copy with it.
 */
import { packedStripsFloats } from './gemm.ts';
import type { HeapKernels, TfjsWasmBackend } from './heap-kernels.ts';

interface Weight {
  dataId: object;
  shape: number[];
}

export class PackedWeights {
  private readonly copies = new Map<object, number>();

  constructor(
    private readonly backend: TfjsWasmBackend,
    private readonly kernels: HeapKernels,
  ) {
    const dispose = backend.disposeData.bind(backend);
    backend.disposeData = (dataId: object, force?: boolean) => {
      const freed = dispose(dataId, force);
      if (freed) this.release(dataId);
      return freed;
    };
  }

  /** The heap address of the packed copy of w [k, n], made now if there is none. */
  of(w: Weight): number {
    const known = this.copies.get(w.dataId);
    if (known !== undefined) return known;
    const [k, n] = w.shape;
    const bytes = Math.max(packedStripsFloats(k, n), 1) * 4;
    const at = this.backend.wasm._malloc(bytes) >>> 0;
    if (!at) throw new Error(`wasm decoding: the heap could not allocate ${bytes} bytes for a packed weight`);
    this.kernels.packStrips(this.backend.getMemoryOffset(w.dataId), at, k, n);
    this.copies.set(w.dataId, at);
    return at;
  }

  /** Packed copies alive (for tests). */
  get size(): number {
    return this.copies.size;
  }

  private release(dataId: object): void {
    const at = this.copies.get(dataId);
    if (at === undefined) return;
    this.backend.wasm._free(at);
    this.copies.delete(dataId);
  }
}

const instances = new WeakMap<TfjsWasmBackend, PackedWeights>();

/** The packed copies of this backend's weights (one set per backend, whose disposeData it wraps). */
export function packedWeightsOf(backend: TfjsWasmBackend, kernels: HeapKernels): PackedWeights {
  let packed = instances.get(backend);
  if (!packed) {
    packed = new PackedWeights(backend, kernels);
    instances.set(backend, packed);
  }
  return packed;
}
