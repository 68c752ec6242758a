/**
 * Chooses the tfjs backend at start-up and says why.
 *
 * Order of preference: `webgpu` on a real GPU adapter; `wasm` (SIMD, plus threads when the page is
 * cross-origin isolated); `cpu` as the last resort. A software WebGPU adapter (SwiftShader, or any
 * adapter flagged `isFallbackAdapter`) is ~20× slower than wasm for training, so it is skipped unless
 * forced. In Node, tfjs-wasm is the fast path (tfjs turns wasm threads off there).
 *
 * `chooseBackend` is pure (tested on hand-made probes); `initBackend` probes the real environment,
 * registers the backend and falls back when initialisation fails.
 */
import * as tf from '@tensorflow/tfjs';
import { readHeapByElement, registerWasmKernels } from './wasm-kernels.ts';
import { registerWasmDecodeStep } from './wasm-decode.ts';
import { registerWasmAttention } from './wasm-attention.ts';
import { registerWasmCausalAttention } from './wasm-attention-train.ts';
import { registerWasmFusedKernels } from './wasm-fused.ts';
import { registerWasmTokenStats } from './wasm-token-stats.ts';
import { registerWasmMatMulKernels } from './wasm-matmul.ts';
import {
  heapKernelsOf,
  relaxedSimdAvailable,
  setKernelThreads,
  simdKernelsSupported,
  type TfjsWasmBackend,
} from './wasm-simd/heap-kernels.ts';
import { coreCount } from './wasm-simd/kernel-threads.ts';
import { withSharedHeap } from './wasm-simd/shared-heap.ts';

const BACKENDS = ['webgpu', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKENDS)[number];

export interface AdapterInfo {
  vendor: string;
  architecture: string;
  isFallbackAdapter: boolean;
}

/** What the environment offers, gathered by `probeEnvironment` (or built by hand in tests). */
export interface BackendProbe {
  isNode: boolean;
  /** `navigator.gpu` exists. */
  hasWebGPU: boolean;
  /** The adapter `requestAdapter()` returned, or null when it returned none. */
  adapter: AdapterInfo | null;
  crossOriginIsolated: boolean;
  wasmSimd: boolean;
}

export interface BackendChoice {
  backend: BackendName;
  /** One sentence a user can read in the status strip. */
  reason: string;
  /** wasm only: whether worker threads are used. */
  threads: boolean;
  simd: boolean;
  adapter: AdapterInfo | null;
  forced: boolean;
  /** wasm only, after start-up: the worker threads tfjs-wasm actually runs (it caps at half the cores). */
  threadsCount?: number;
  /** wasm only, after start-up: the threads Spindle's own kernels split products between (wasm-simd/kernel-threads.ts). */
  kernelThreads?: number;
}

function isBackendName(name: string): name is BackendName {
  return (BACKENDS as readonly string[]).includes(name);
}

function isRealGpu(adapter: AdapterInfo | null): boolean {
  if (!adapter) return false;
  return !adapter.isFallbackAdapter && !/swiftshader/i.test(adapter.architecture + adapter.vendor);
}

function availability(probe: BackendProbe): Record<BackendName, string | null> {
  return {
    webgpu: !probe.hasWebGPU
      ? 'this browser has no WebGPU (navigator.gpu is missing)'
      : !probe.adapter
        ? 'WebGPU returned no adapter'
        : null,
    wasm: null,
    cpu: null,
  };
}

/** Pure decision: which backend to use given what the environment offers and what the user forced. */
export function chooseBackend(probe: BackendProbe, forced?: string | null): BackendChoice {
  const base = { simd: probe.wasmSimd, adapter: probe.adapter };
  const wasmThreads = !probe.isNode && probe.crossOriginIsolated;
  const wasmDetail = `SIMD ${probe.wasmSimd ? 'on' : 'off'}, ${wasmThreads ? 'threads on' : 'single thread'}`;

  if (forced) {
    if (!isBackendName(forced)) {
      throw new Error(`Unknown backend "${forced}". Choose one of: ${BACKENDS.join(', ')}.`);
    }
    const missing = availability(probe)[forced];
    if (missing) {
      const others = BACKENDS.filter((b) => b !== forced && !availability(probe)[b]);
      throw new Error(`Backend "${forced}" is not available: ${missing}. Available instead: ${others.join(', ')}.`);
    }
    const detail = forced === 'wasm' ? ` (${wasmDetail})` : forced === 'webgpu' ? ` (${describe(probe.adapter)})` : '';
    return {
      ...base,
      backend: forced,
      threads: forced === 'wasm' && wasmThreads,
      forced: true,
      reason: `forced by the user${detail}`,
    };
  }

  if (probe.isNode) {
    return {
      ...base,
      backend: 'wasm',
      threads: false,
      forced: false,
      reason: `Node: wasm is the fast path (${wasmDetail})`,
    };
  }
  if (isRealGpu(probe.adapter)) {
    return {
      ...base,
      backend: 'webgpu',
      threads: false,
      forced: false,
      reason: `real GPU adapter (${describe(probe.adapter)})`,
    };
  }
  const why = availability(probe).webgpu ?? `the WebGPU adapter is a software fallback (${describe(probe.adapter)})`;
  return {
    ...base,
    backend: 'wasm',
    threads: wasmThreads,
    forced: false,
    reason: `${why}; using wasm (${wasmDetail})`,
  };
}

function describe(adapter: AdapterInfo | null): string {
  if (!adapter) return 'no adapter';
  return [
    adapter.vendor || 'unknown vendor',
    adapter.architecture || 'unknown architecture',
    adapter.isFallbackAdapter ? 'fallback' : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** WebAssembly SIMD feature test: a tiny module using a v128 instruction validates only with SIMD. */
function detectWasmSimd(): boolean {
  const bytes = new Uint8Array([
    0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
  ]);
  try {
    return WebAssembly.validate(bytes);
  } catch {
    return false;
  }
}

export async function probeEnvironment(): Promise<BackendProbe> {
  const isNode = typeof process !== 'undefined' && !!process.versions?.node && typeof window === 'undefined';
  const gpu = typeof navigator !== 'undefined' ? (navigator as Navigator & { gpu?: GPU }).gpu : undefined;
  let adapter: AdapterInfo | null = null;
  if (gpu) {
    try {
      const a = await gpu.requestAdapter();
      if (a) {
        const info = (a as GPUAdapter & { info?: GPUAdapterInfo }).info;
        const legacyFallback = (a as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter;
        adapter = {
          vendor: info?.vendor ?? '',
          architecture: info?.architecture ?? '',
          isFallbackAdapter: Boolean(
            (info as unknown as { isFallbackAdapter?: boolean })?.isFallbackAdapter ?? legacyFallback,
          ),
        };
      }
    } catch {
      adapter = null;
    }
  }
  return {
    isNode,
    hasWebGPU: !!gpu,
    adapter,
    crossOriginIsolated: typeof globalThis.crossOriginIsolated === 'boolean' ? globalThis.crossOriginIsolated : false,
    wasmSimd: detectWasmSimd(),
  };
}

export interface InitOptions {
  forced?: string | null;
  /** Browser only: where the tfjs-wasm binaries are served (the app serves them itself). */
  wasmPaths?: Record<string, string>;
  probe?: BackendProbe;
  /**
   * wasm: threads for Spindle's kernels, this one included; 1 keeps them on the calling thread. Default:
   * SPINDLE_KERNEL_THREADS in Node's environment, else every core.
   */
  kernelThreads?: number;
}

/** SPINDLE_KERNEL_THREADS, when Node's environment sets it. */
function kernelThreadsFromEnvironment(): number | undefined {
  const value = typeof process !== 'undefined' ? process.env?.SPINDLE_KERNEL_THREADS : undefined;
  if (value === undefined || value === '') return undefined;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`SPINDLE_KERNEL_THREADS must be a whole number ≥ 1; got "${value}"`);
  return count;
}

/** Registers and activates the chosen backend; if it fails to start, falls back down the list and says so. */
export async function initBackend(options: InitOptions = {}): Promise<BackendChoice> {
  const probe = options.probe ?? (await probeEnvironment());
  const choice = chooseBackend(probe, options.forced);
  const order = BACKENDS.slice(BACKENDS.indexOf(choice.backend));
  let failure = '';
  for (const backend of order) {
    try {
      const { threadsCount, kernelThreads } = await activate(backend, choice, options, probe);
      if (backend === choice.backend) return { ...choice, threadsCount, kernelThreads };
      return {
        ...choice,
        backend,
        threads: false,
        threadsCount,
        kernelThreads,
        reason: `${choice.reason}; ${choice.backend} failed to start (${failure}), using ${backend}`,
      };
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
      if (choice.forced) throw new Error(`Backend "${backend}" failed to start: ${failure}`, { cause: err });
    }
  }
  throw new Error(`No tfjs backend could start: ${failure}`);
}

/**
 * Node 20's V8 has WebAssembly's relaxed SIMD behind a flag (it is on by default in Chrome ≥ 114 and
 * Node ≥ 22). Turned on before the matrix kernel is compiled, so the CLI and the benchmarks run the
 * multiply-add kernel Chrome runs (wasm-simd/). Nothing is set where the engine already has it.
 */
async function enableRelaxedSimdInNode(): Promise<void> {
  if (relaxedSimdAvailable()) return;
  const specifier = 'node:v8'; // not a literal: the browser bundle must not try to resolve it
  const v8 = (await import(/* @vite-ignore */ specifier)) as typeof import('node:v8');
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
}

/** Starts one backend and proves it computes (a backend can register and still fail on first use). */
async function activate(
  backend: BackendName,
  choice: BackendChoice,
  options: InitOptions,
  probe: BackendProbe,
): Promise<{ threadsCount?: number; kernelThreads?: number }> {
  let threadsCount: (() => number) | undefined;
  if (backend === 'webgpu') {
    await import('@tensorflow/tfjs-backend-webgpu');
    (await import('./webgpu/register.ts')).registerWebGpuKernels();
  }
  if (backend === 'wasm') {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    if (options.wasmPaths) wasm.setWasmPaths(options.wasmPaths);
    if (!choice.threads) tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    if (probe.isNode) await enableRelaxedSimdInNode();
    threadsCount = wasm.getThreadsCount;
    registerWasmKernels();
    registerWasmFusedKernels();
    registerWasmTokenStats();
    if (simdKernelsSupported()) {
      registerWasmMatMulKernels(); // without wasm SIMD, mm and bmm use tfjs's matMul
      registerWasmDecodeStep(); // without it, generation runs every decoding step as the graph's ops
      registerWasmAttention(); // without it, a prompt's attention runs as tfjs's ops
      registerWasmCausalAttention(); // without it, training's attention runs as products, a softmax and their gradients
    }
  }
  // In Node the heap is made shared as tfjs-wasm starts, so that kernel threads can work on it (shared-heap.ts).
  const ok =
    backend === 'wasm' && probe.isNode
      ? await withSharedHeap(() => tf.setBackend(backend))
      : await tf.setBackend(backend);
  if (!ok) throw new Error(`tf.setBackend('${backend}') returned false`);
  await tf.ready();
  if (backend === 'wasm') readHeapByElement(tf.backend());
  const smoke = tf.tidy(() => tf.matMul(tf.ones([8, 8]), tf.ones([8, 8])).sum());
  const value = (await smoke.data())[0];
  smoke.dispose();
  if (value !== 512) throw new Error(`${backend} computed a wrong smoke-test result (${value}, expected 512)`);
  if (backend !== 'wasm' || !simdKernelsSupported()) return { threadsCount: threadsCount?.() };
  setKernelThreads(options.kernelThreads ?? kernelThreadsFromEnvironment() ?? (await coreCount()));
  const kernels = heapKernelsOf((tf.backend() as unknown as TfjsWasmBackend).wasm);
  return { threadsCount: threadsCount?.(), kernelThreads: await kernels.threadsReady() };
}
