import { describe, expect, it } from 'vitest';
import { chooseBackend, initBackend, type BackendProbe } from '../../src/kernels/backend.ts';
import * as tf from '@tensorflow/tfjs';
import os from 'node:os';

const browser = (over: Partial<BackendProbe> = {}): BackendProbe => ({
  isNode: false,
  hasWebGPU: true,
  adapter: { vendor: 'nvidia', architecture: 'ampere', isFallbackAdapter: false },
  crossOriginIsolated: true,
  wasmSimd: true,
  ...over,
});

describe('chooseBackend', () => {
  it('picks webgpu on a real GPU adapter', () => {
    const choice = chooseBackend(browser());
    expect(choice.backend).toBe('webgpu');
    expect(choice.reason).toContain('nvidia');
  });

  it('skips a fallback adapter for wasm with threads when isolated', () => {
    const choice = chooseBackend(
      browser({ adapter: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true } }),
    );
    expect(choice.backend).toBe('wasm');
    expect(choice.threads).toBe(true);
    expect(choice.reason).toMatch(/software fallback/);
  });

  it('treats SwiftShader as software even when not flagged as fallback', () => {
    const choice = chooseBackend(
      browser({ adapter: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: false } }),
    );
    expect(choice.backend).toBe('wasm');
  });

  it('uses single-threaded wasm without WebGPU and without isolation', () => {
    const choice = chooseBackend(browser({ hasWebGPU: false, adapter: null, crossOriginIsolated: false }));
    expect(choice.backend).toBe('wasm');
    expect(choice.threads).toBe(false);
    expect(choice.reason).toMatch(/no WebGPU/);
  });

  it('picks wasm in Node', () => {
    const choice = chooseBackend(browser({ isNode: true, hasWebGPU: false, adapter: null }));
    expect(choice).toMatchObject({ backend: 'wasm', threads: false });
  });

  it('honours a forced backend, even a software adapter', () => {
    const probe = browser({ adapter: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true } });
    expect(chooseBackend(probe, 'webgpu')).toMatchObject({ backend: 'webgpu', forced: true });
    expect(chooseBackend(probe, 'cpu')).toMatchObject({ backend: 'cpu', forced: true });
  });

  it('explains an unavailable forced backend and names the alternatives', () => {
    const probe = browser({ hasWebGPU: false, adapter: null });
    expect(() => chooseBackend(probe, 'webgpu')).toThrow(
      /"webgpu" is not available: .*navigator\.gpu.*Available instead: wasm, cpu/,
    );
  });

  it('rejects an unknown backend name with the allowed ones', () => {
    expect(() => chooseBackend(browser(), 'tpu')).toThrow('Unknown backend "tpu". Choose one of: webgpu, wasm, cpu.');
  });
});

describe('initBackend in Node', () => {
  it('activates wasm and runs a matmul on it', async () => {
    const choice = await initBackend();
    expect(choice.backend).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
    const product = tf.matMul(tf.tensor2d([[1, 2]]), tf.tensor2d([[3], [4]]));
    expect(await product.data()).toEqual(new Float32Array([11]));
    product.dispose();
  });

  it('runs its kernels on every core by default, on SPINDLE_KERNEL_THREADS when set, and on the count asked for', async () => {
    expect((await initBackend({ forced: 'wasm' })).kernelThreads).toBe(os.availableParallelism());
    process.env.SPINDLE_KERNEL_THREADS = '1';
    try {
      expect((await initBackend({ forced: 'wasm' })).kernelThreads).toBe(1);
      expect((await initBackend({ forced: 'wasm', kernelThreads: 3 })).kernelThreads).toBe(3);
      process.env.SPINDLE_KERNEL_THREADS = 'many';
      await expect(initBackend({ forced: 'wasm' })).rejects.toThrow(
        'SPINDLE_KERNEL_THREADS must be a whole number ≥ 1; got "many"',
      );
    } finally {
      delete process.env.SPINDLE_KERNEL_THREADS;
      await initBackend({ forced: 'wasm' });
    }
  });
});
