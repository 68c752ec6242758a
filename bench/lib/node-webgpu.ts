/**
 * WebGPU in Node, for tests and benchmarks: the `webgpu` package's Dawn installed as navigator.gpu,
 * then tfjs-backend-webgpu with Spindle's kernels.
 *
 * Dawn opens the Vulkan loader by name (libvulkan.so.1). A machine with a GPU driver has it on the
 * library path, and Dawn finds the GPU. One without (CI, a laptop with no Vulkan) can still run
 * WebGPU on SwiftShader: Debian's chromium package ships a Vulkan loader and SwiftShader's Vulkan
 * driver in /usr/lib/chromium, outside the library path. That loader is opened here by its full path
 * and kept loaded (RTLD_NODELETE), so Dawn's open by name finds it, and VK_ICD_FILENAMES points the
 * loader at SwiftShader. Node has no call that loads a plain library, so `process.dlopen` is used;
 * it loads the library and then throws because the library is no Node addon, which is expected.
 */
import os from 'node:os';
import { existsSync } from 'node:fs';

const CHROMIUM_DIR = '/usr/lib/chromium';
const RTLD_NODELETE = 0x1000; // glibc's value; Node's os.constants.dlopen does not list it

export interface NodeWebGpu {
  adapter: GPUAdapter;
  /** What the adapter is, for benchmark output: vendor, architecture, description. */
  description: string;
  software: boolean;
}

function openLibrary(path: string): boolean {
  const { RTLD_NOW, RTLD_GLOBAL } = os.constants.dlopen as Record<string, number>;
  try {
    process.dlopen({ exports: {} } as NodeJS.Module, path, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    return true;
  } catch (e) {
    return /did not self-register|Module did not/.test((e as Error).message);
  }
}

async function requestAdapter(): Promise<GPUAdapter | null> {
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const gpu = create([]);
  Object.defineProperty(globalThis, 'navigator', {
    value: { ...(globalThis.navigator ?? {}), gpu },
    configurable: true,
    writable: true,
  });
  return gpu.requestAdapter({ powerPreference: 'high-performance' });
}

function describe(adapter: GPUAdapter): string {
  const { vendor, architecture, description } = adapter.info;
  return [vendor, architecture, description].filter(Boolean).join(' / ') || 'unnamed adapter';
}

/**
 * Installs navigator.gpu and returns its adapter; `software: true` asks for SwiftShader even where a
 * GPU exists. Throws, naming the fix, when no adapter can be had.
 */
export async function installNodeWebGpu(opts: { software?: boolean } = {}): Promise<NodeWebGpu> {
  // SPINDLE_VULKAN_LOADER: a loader carried to a machine that has a GPU driver but no loader installed.
  const loader = process.env.SPINDLE_VULKAN_LOADER;
  if (!opts.software && openLibrary(loader && existsSync(loader) ? loader : 'libvulkan.so.1')) {
    const adapter = await requestAdapter();
    if (adapter && !adapter.info.architecture.includes('swiftshader'))
      return { adapter, description: describe(adapter), software: false };
  }
  const icd = `${CHROMIUM_DIR}/vk_swiftshader_icd.json`;
  if (!existsSync(icd) || !openLibrary(`${CHROMIUM_DIR}/libvulkan.so.1`)) {
    throw new Error(
      `No WebGPU adapter: no GPU Vulkan driver, and no SwiftShader at ${icd}. Install Debian's chromium (apt-get install -y chromium), which ships it.`,
    );
  }
  process.env.VK_ICD_FILENAMES = icd;
  const adapter = await requestAdapter();
  if (!adapter) throw new Error(`Dawn found no adapter even with SwiftShader (${icd}).`);
  return { adapter, description: describe(adapter), software: true };
}

/** installNodeWebGpu, then tfjs's webgpu backend with Spindle's kernels, made current. */
export async function useNodeWebGpu(opts: { software?: boolean } = {}): Promise<NodeWebGpu> {
  const gpu = await installNodeWebGpu(opts);
  const tf = await import('@tensorflow/tfjs');
  await import('@tensorflow/tfjs-backend-webgpu');
  (await import('../../src/kernels/webgpu/register.ts')).registerWebGpuKernels();
  if (!(await tf.setBackend('webgpu')))
    throw new Error(`tfjs could not start its webgpu backend on ${gpu.description}`);
  await tf.ready();
  return gpu;
}
