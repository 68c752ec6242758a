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
  // `npm start` must never reload a page by itself. Vite's dependency scan starts from the HTML pages and
  // does not follow `new Worker(new URL(…))`, so a dependency first imported in a worker (onnxruntime-web
  // on the in-browser judge's first use, @huggingface/tokenizers) was optimized mid-session and the page
  // reloaded under a running run. The workers are scanned too, and every browser dependency is listed.
  optimizeDeps: {
    entries: ['index.html', 'selftest.html', 'workers/*.worker.ts'],
    include: [
      '@huggingface/jinja',
      '@huggingface/tokenizers',
      '@tensorflow/tfjs',
      '@tensorflow/tfjs-backend-wasm',
      '@tensorflow/tfjs-backend-webgpu',
      'buffer',
      'comlink',
      'fflate',
      'hyparquet',
      'hyparquet-writer',
      'idb',
      'isomorphic-git',
      'onnxruntime-web/wasm',
      'quickjs-emscripten-core',
      're2js',
      'uplot',
      'yaml',
    ],
    exclude: ['@jitl/quickjs-wasmfile-release-sync'],
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/e2e/**', 'tests/**/*.readme.test.ts', 'tests/**/*.slow.test.ts'],
          testTimeout: 60_000,
          // A setup that trains a small model takes about 10 s alone and several times that on a loaded 2-core machine.
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          // `npm run test:slow`: unit tests that take minutes on a 2-core machine (every environment's
          // task-blind sweep, a training run killed at 24 moments), so that `npm test` stays minutes long
          // and passes on a loaded machine. CI runs both.
          name: 'slow',
          environment: 'node',
          include: ['tests/**/*.slow.test.ts'],
          testTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          // `npm run test:readme`: the README's commands in order, each small (SPINDLE_SMALL=1).
          name: 'readme',
          environment: 'node',
          include: ['tests/**/*.readme.test.ts'],
          testTimeout: 240_000,
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
