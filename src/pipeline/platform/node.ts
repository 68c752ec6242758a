/**
 * The pipeline in Node (CLI, tests, benchmarks): rollout workers on worker_threads (comlink's Node
 * adapter), the model and trainer on the calling thread with the wasm backend, a file-backed store.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { RunConfig } from '../../config/schema.ts';
import type { Store } from '../../store/index.ts';
import type { TokenizerSpec } from '../engine/engine-api.ts';
import { loadPolicyModel, resolveModelPath } from './node-model.ts';
import type { RemoteGenerator } from '../engine/generation.ts';
import { tokenizerSpec } from '../engine/tokenizer-spec.ts';
import type { RolloutWorker } from '../engine/rollout-protocol.ts';
import type { RolloutWorkerApi } from '../engine/rollout-worker-api.ts';
import { PipelineRun, type RunDeps } from '../operations/run.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BOOT = resolve(REPO, 'workers/node-boot.mjs');
const ENTRY = new URL('../../../workers/rollout.node.ts', import.meta.url).href;

// Benchmarks and scripts name the shipped models through here too.
export { resolveModelPath };

/** The run config's base model, loaded as every Node operation loads one (node-model.ts). */
export async function loadNodeModel(config: RunConfig): ReturnType<RunDeps['loadModel']> {
  const { model, tokenizer } = await loadPolicyModel(resolveModelPath(config.model.base_model), { config });
  return { model, tokenizer };
}

/** A rollout worker_thread; `thread` is exposed so tests (and a hung-worker watchdog) can kill it outright. */
export function spawnNodeRolloutWorker(
  _index: number,
  generator: RemoteGenerator,
  policyId = 'local',
  tokenizer: TokenizerSpec | null = null,
): RolloutWorker & { thread: Worker } {
  const channel = new MessageChannel();
  Comlink.expose(generator, nodeEndpoint(channel.port1));
  const worker = new Worker(BOOT, {
    workerData: { entry: ENTRY, enginePort: channel.port2, policyId, tokenizer },
    transferList: [channel.port2],
  });
  const api = Comlink.wrap<RolloutWorkerApi>(nodeEndpoint(worker));
  let crashed: (error: Error) => void = () => {};
  worker.on('error', (error) => crashed(error));
  // Any exit we did not ask for is a crash (a terminated thread can report code 0).
  worker.on('exit', (code) => crashed(new Error(`exited unexpectedly (code ${code})`)));
  return {
    thread: worker,
    configure: (settings) => api.configure(settings),
    run: (job, onEvent) => api.runEpisode(job, onEvent && Comlink.proxy(onEvent)),
    terminate: () => {
      crashed = () => {};
      channel.port1.close();
      void worker.terminate();
    },
    onCrash: (callback) => {
      crashed = callback;
    },
  };
}

export function createNodeRun(options: {
  store: Store;
  cores?: number;
  loadModel?: RunDeps['loadModel'];
  onHeld?: RunDeps['onHeld'];
}): PipelineRun {
  // Workers tokenise with the run model's tokenizer, known once the run loaded it (the pool starts after).
  let tokenizer: TokenizerSpec | null = null;
  return new PipelineRun({
    store: options.store,
    loadModel: async (config) => {
      const loaded = await (options.loadModel ?? loadNodeModel)(config);
      tokenizer = tokenizerSpec(loaded.tokenizer);
      return loaded;
    },
    spawnWorker: (i, generator) => spawnNodeRolloutWorker(i, generator, 'local', tokenizer),
    getSecret: (name) => process.env[name] ?? null,
    cores: options.cores ?? Math.max(1, availableParallelism()),
    backend: 'wasm',
    onHeld: options.onHeld,
  });
}
