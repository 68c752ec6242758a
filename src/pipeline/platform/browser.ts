/**
 * The pipeline in the browser, inside the engine web worker: the tfjs backend started there (wasm
 * threads need the page to be cross-origin isolated; if they fail, single-threaded wasm), the store
 * over the worker's IndexedDB, the base model from the app's assets, and rollout workers as nested
 * module web workers that reach the engine's generation service over a MessagePort.
 */
import * as tf from '@tensorflow/tfjs';
import * as Comlink from 'comlink';
import { initBackend, probeEnvironment, type BackendChoice } from '../../kernels/backend.ts';
import { tfjsWasmPaths } from '../../kernels/wasm-paths.ts';
import { openStore } from '../../store/index.ts';
import { Engine } from '../engine/browser-engine.ts';
import type { TokenizerSpec } from '../engine/engine-api.ts';
import { loadBrowserModel, shippedModelMissing, webFolder } from './browser-model.ts';
import { lockRun } from '../engine/run-lock.ts';
import type { RemoteGenerator } from '../engine/generation.ts';
import type { RolloutWorker } from '../engine/rollout-protocol.ts';
import type { RolloutWorkerApi } from '../engine/rollout-worker-api.ts';
import { browserCache } from '../../hub/hub.ts';

/** What workers/rollout.worker.ts exposes: `init` once (with the run model's HF tokenizer, or null for bytes), then the rollout worker's calls. */
export interface RolloutWorkerBoot extends RolloutWorkerApi {
  init(
    enginePort: MessagePort,
    policyId: string,
    secrets: Record<string, string>,
    tokenizer: TokenizerSpec | null,
  ): void;
}

/**
 * tfjs-wasm sizes its thread pool from navigator.hardwareConcurrency as seen where it runs (half of
 * it, read once when the wasm module starts). Inside this worker that is made to agree with the page
 * that spawned it, which is the same figure in every browser unless the page chose to report fewer
 * (or, in tests, more) cores: the engine then uses what the page says it may.
 */
function adoptPageCores(cores: number): void {
  if (navigator.hardwareConcurrency === cores) return;
  Object.defineProperty(Object.getPrototypeOf(navigator) as object, 'hardwareConcurrency', {
    configurable: true,
    get: () => cores,
  });
}

/** initBackend for a worker: wasm threads sized from the page's cores, and single-threaded wasm if threads fail. */
async function initWorkerBackend(forced: string | null, cores: number): Promise<BackendChoice> {
  adoptPageCores(cores);
  const probe = await probeEnvironment();
  const threaded = probe.crossOriginIsolated && (forced === null || forced === 'wasm');
  let failure: string;
  try {
    const choice = await initBackend({ forced, wasmPaths: tfjsWasmPaths, probe });
    const wasmDied = threaded && choice.backend === 'cpu' && /wasm failed to start/.test(choice.reason);
    if (!wasmDied) return choice;
    failure = choice.reason;
  } catch (error) {
    if (!threaded) throw error;
    failure = error instanceof Error ? error.message : String(error);
  }
  const single = await initBackend({
    forced,
    wasmPaths: tfjsWasmPaths,
    probe: { ...probe, crossOriginIsolated: false },
  });
  return { ...single, reason: `wasm threads failed to start (${failure}); ${single.reason}` };
}

/** Resolves when the WebGPU device under tfjs is lost; null on other backends. */
function webgpuDeviceLost(): Promise<string> | null {
  if (tf.getBackend() !== 'webgpu') return null;
  const device = (tf.backend() as unknown as { device?: GPUDevice }).device;
  if (!device) return null;
  return device.lost.then((info) => (info.message ? `${info.reason}: ${info.message}` : String(info.reason)));
}

/**
 * A rollout web worker: its `init` gets one end of a MessageChannel on which the engine serves
 * `generate`, plus the judges' keys; its run configures it (rollout-protocol.ts) before any episode. An
 * `error` event (an uncaught exception, a sandbox taking its host down) is a crash: the pool terminates
 * the worker and re-queues its episode.
 */
function spawnWebRolloutWorker(
  index: number,
  generator: RemoteGenerator,
  secrets: Record<string, string>,
  tokenizer: TokenizerSpec | null = null,
  policyId = 'local',
): RolloutWorker {
  const channel = new MessageChannel();
  Comlink.expose(generator, channel.port1);
  const worker = new Worker(new URL('../../../workers/rollout.worker.ts', import.meta.url), {
    type: 'module',
    name: `rollout-${index}`,
  });
  const remote = Comlink.wrap<RolloutWorkerBoot>(worker);
  const ready = remote.init(Comlink.transfer(channel.port2, [channel.port2]), policyId, secrets, tokenizer);
  let crashed: (error: Error) => void = () => {};
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    crashed(new Error(event.message || 'uncaught error in the rollout worker'));
  });
  worker.addEventListener('messageerror', () =>
    crashed(new Error('a message from the rollout worker could not be read')),
  );
  return {
    configure: async (settings) => {
      await ready;
      await remote.configure(settings);
    },
    run: async (job, onEvent) => {
      await ready;
      return remote.runEpisode(job, onEvent && Comlink.proxy(onEvent));
    },
    terminate: () => {
      crashed = () => {};
      channel.port1.close();
      worker.terminate();
    },
    onCrash: (callback) => {
      crashed = callback;
    },
  };
}

export function createBrowserEngine(): Engine {
  return new Engine({
    initBackend: initWorkerBackend,
    deviceLost: webgpuDeviceLost,
    openStore: () => openStore(),
    loadModel: async (baseModel, options) => {
      const { model, tokenizer } = await loadBrowserModel(baseModel, options);
      return { model, tokenizer };
    },
    baseModelMissing: shippedModelMissing,
    spawnWorker: (index, generator, secrets, tokenizer) => spawnWebRolloutWorker(index, generator, secrets, tokenizer),
    urlFiles: (url) => webFolder(new URL(url, self.location.href).href),
    hubCache: () => (typeof caches === 'undefined' ? null : browserCache()),
    lockRun,
    cores: Math.max(1, navigator.hardwareConcurrency || 1),
  });
}
