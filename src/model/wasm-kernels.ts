/**
 * Kernels Spindle registers over tfjs-wasm's own, where the built-in one does work that is not needed.
 *
 * Identity: while a gradient tape records, tfjs clones every tensor a kernel saves for its backward
 * pass, and tfjs-wasm's Identity copies the whole buffer: about a tenth of a LoRA update's time went
 * to those copies. Tensor buffers are never written after their kernel returns (a variable's assign
 * takes a new buffer), so the clone can share the buffer with a reference count, as Reshape does.
 */
import * as tf from '@tensorflow/tfjs';

interface RefCountingBackend {
  incRef(dataId: object): void;
}

export function registerWasmKernels(): void {
  const builtIn = tf.getKernel('Identity', 'wasm');
  if (!builtIn || builtIn.kernelFunc.name === 'sharedIdentity') return;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({
    kernelName: 'Identity',
    backendName: 'wasm',
    kernelFunc: function sharedIdentity(args) {
      const x = args.inputs.x as tf.TensorInfo;
      if (x.dtype === 'string') return builtIn.kernelFunc(args);
      (args.backend as unknown as RefCountingBackend).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
}
