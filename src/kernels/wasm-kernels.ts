/**
 * Kernels Spindle registers over tfjs-wasm's own, where the built-in one does work that is not needed.
 *
 * Identity: while a gradient tape records, tfjs clones every tensor a kernel saves for its backward
 * pass, and tfjs-wasm's Identity copies the whole buffer: about a tenth of a LoRA update's time went
 * to those copies. Tensor buffers are never written after their kernel returns (a variable's assign
 * takes a new buffer), so the clone can share the buffer with a reference count, as Reshape does.
 *
 * GatherV2 along the first axis (whole rows): tfjs-wasm's gather walks every element through its
 * strides, about 30 ns a float, and generation gathers whole key/value caches when rows finish (a
 * batch of multi-step turns spent about a tenth of its time there). Rows are contiguous, so each is one
 * byte copy on the heap. Unlike tfjs-wasm's, it refuses an index outside the rows instead of reading
 * memory it does not own.
 *
 * Reads (readHeapByElement): tfjs-wasm copies a tensor out with HEAPU8.slice, and over a shared heap
 * (Node's, shared-heap.ts, and a cross-origin-isolated page's threaded build) V8 copies a byte at a time
 * there: 57 µs for a batch-16 decoding step's 17 KB of logits, against 4 µs through a view of the
 * tensor's own element type.
 */
import * as tf from '@tensorflow/tfjs';

interface WasmBackend {
  incRef(dataId: object): void;
  readSync(dataId: object, start?: number, end?: number): tf.backend_util.BackendValues;
  dataIdMap: { get(dataId: object): { memoryOffset: number; dtype: tf.DataType; shape: number[] } | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  getMemoryOffset(dataId: object): number;
  wasm: { HEAPU8: Uint8Array; HEAP32: Int32Array };
  disposeData?(dataId: object): boolean;
}

export function registerWasmKernels(): void {
  registerSharedIdentity();
  registerRowGather();
}

function registerSharedIdentity(): void {
  const builtIn = tf.getKernel('Identity', 'wasm');
  if (!builtIn || builtIn.kernelFunc.name === 'sharedIdentity') return;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({
    kernelName: 'Identity',
    backendName: 'wasm',
    kernelFunc: function sharedIdentity(args) {
      const x = args.inputs.x as tf.TensorInfo;
      if (x.dtype === 'string') return builtIn.kernelFunc(args);
      (args.backend as unknown as WasmBackend).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
}

/** Bytes per element of the dtypes tfjs-wasm stores (bool is one byte; strings are not on the heap). */
const ELEMENT_BYTES: Partial<Record<tf.DataType, number>> = { float32: 4, int32: 4, bool: 1 };

function registerRowGather(): void {
  const builtIn = tf.getKernel('GatherV2', 'wasm');
  if (!builtIn || builtIn.kernelFunc.name === 'rowGather') return;
  tf.unregisterKernel('GatherV2', 'wasm');
  tf.registerKernel({
    kernelName: 'GatherV2',
    backendName: 'wasm',
    setupFunc: builtIn.setupFunc, // binds tfjs-wasm's own gather, which the other axes still run
    kernelFunc: function rowGather(args) {
      const { x, indices } = args.inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
      const { axis, batchDims } = args.attrs as unknown as { axis: number; batchDims: number };
      const bytes = ELEMENT_BYTES[x.dtype];
      const firstAxis = tf.util.parseAxisParam(axis, x.shape)[0] === 0 && batchDims === 0;
      if (!firstAxis || !bytes || indices.dtype !== 'int32') return builtIn.kernelFunc(args);
      const backend = args.backend as unknown as WasmBackend;
      const rows = x.shape[0];
      const rowBytes = (tf.util.sizeFromShape(x.shape) / Math.max(rows, 1)) * bytes;
      const count = tf.util.sizeFromShape(indices.shape);
      const out = backend.makeOutput([...indices.shape, ...x.shape.slice(1)], x.dtype);
      if (count === 0 || rowBytes === 0) return out;
      // Addresses after makeOutput: allocating may grow the heap, which replaces its views.
      const heap = backend.wasm.HEAPU8;
      const picks = backend.wasm.HEAP32.subarray(
        backend.getMemoryOffset(indices.dataId) / 4,
        backend.getMemoryOffset(indices.dataId) / 4 + count,
      );
      const from = backend.getMemoryOffset(x.dataId);
      const to = backend.getMemoryOffset(out.dataId);
      for (let i = 0; i < count; i++) {
        const row = picks[i];
        if (!(row >= 0 && row < rows)) {
          backend.disposeData?.(out.dataId);
          throw new Error(`gather: index ${row} is outside the ${rows} rows of a [${x.shape.join(', ')}] tensor`);
        }
        heap.copyWithin(to + i * rowBytes, from + row * rowBytes, from + (row + 1) * rowBytes);
      }
      return out;
    },
  });
}

/** Reads float32 and int32 tensors through a view of their element type (see the header); other dtypes as tfjs-wasm does. */
export function readHeapByElement(backend: tf.KernelBackend): void {
  const wasm = backend as unknown as WasmBackend;
  if ((wasm.readSync as { byElement?: boolean }).byElement) return; // installed already (a second initBackend)
  const original = wasm.readSync.bind(wasm);
  const readSync = (dataId: object, start?: number, end?: number) => {
    const entry = wasm.dataIdMap.get(dataId);
    const View = entry?.dtype === 'float32' ? Float32Array : entry?.dtype === 'int32' ? Int32Array : null;
    if (!entry || !View || entry.memoryOffset % 4 !== 0) return original(dataId, start, end);
    // The same bounds as tfjs-wasm's: a missing or zero start is 0, a missing or zero end the whole tensor.
    const from = start || 0;
    const to = end || tf.util.sizeFromShape(entry.shape);
    return new View(wasm.wasm.HEAPU8.buffer as ArrayBuffer, entry.memoryOffset + from * 4, to - from).slice(); // shared or not
  };
  wasm.readSync = Object.assign(readSync, { byElement: true });
}
