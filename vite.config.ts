import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Cross-origin isolation lets tfjs-wasm use threads (SharedArrayBuffer). The same headers are sent by
// the dev server and by `vite preview`, so the built app behaves like the dev one.
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  plugins: [svelte()],
  server: { headers: isolationHeaders },
  preview: { headers: isolationHeaders },
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    // The threaded tfjs-wasm backend rebuilds its pthread worker from the source text of its own
    // factory function; minifying renames the free variables that text refers to and the workers die
    // with "e is not defined" (tfjs#4107). Keeping identifiers intact keeps wasm threads working.
    minify: false,
    chunkSizeWarningLimit: 8000,
    // selftest.html: the model's WebGPU-vs-cpu check, opened by tests/e2e/model-webgpu.e2e.test.ts.
    rollupOptions: { input: { main: 'index.html', selftest: 'selftest.html' } },
  },
  optimizeDeps: { exclude: ['@jitl/quickjs-wasmfile-release-sync'] },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/e2e/**'],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['tests/e2e/**/*.e2e.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
