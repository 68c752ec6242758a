/**
 * The page's side of the engine web worker (workers/engine.worker.ts): one per tab, started on first
 * use with the page's `?backend=` choice and core count. Gives the Train screen a RunController, the
 * status strip the backend actually used for training, and the playground its episodes (in rollout
 * workers of the engine). Transport only: what the calls do is src/pipeline.
 *
 * Events from the worker arrive through one comlink proxy and fan out to local listeners, so
 * `subscribe` stays synchronous like the RunController interface wants.
 */
import * as Comlink from 'comlink';
import type { RunConfig } from '../../../config/schema.ts';
import type { Engine } from '../../../pipeline/engine/browser-engine.ts';
import type { BackendChoice } from '../../../pipeline/engine/engine-api.ts';
import type { RunController, RunEvent, RunListener } from '../../../pipeline/operations/events.ts';

export type EngineRemote = Comlink.Remote<Engine>;

interface Connection {
  engine: EngineRemote;
  ready: Promise<BackendChoice>;
}

let connection: Connection | null = null;
const runListeners = new Set<RunListener>();
const crashListeners = new Set<(message: string) => void>();

function emitLocal(event: RunEvent): void {
  for (const listener of runListeners) listener(event);
}

/** `?backend=webgpu|wasm|cpu` forces the engine's backend (as the status strip explains). */
function forcedBackend(): string | null {
  return typeof location === 'undefined' ? null : new URLSearchParams(location.search).get('backend');
}

function connect(): Connection {
  const worker = new Worker(new URL('../../../../workers/engine.worker.ts', import.meta.url), {
    type: 'module',
    name: 'engine',
  });
  const engine = Comlink.wrap<Engine>(worker);
  worker.addEventListener('error', (event) => {
    const message = `The engine worker crashed (${event.message || 'no message'}). Reload the page: finished trajectories and checkpoints are kept, and an interrupted run can be resumed.`;
    for (const listener of crashListeners) listener(message);
    emitLocal({ type: 'error', run_id: '', message, fatal: true });
  });
  void engine.subscribe(Comlink.proxy(emitLocal));
  const ready = engine.init({
    forced: forcedBackend(),
    cores: navigator.hardwareConcurrency || 1,
    hubEndpoint: new URLSearchParams(location.search).get('hf_endpoint'),
  });
  return { engine, ready };
}

/** The engine, started on first call; `ready` settles when its backend is up (or failed to start). */
export function getEngine(): Connection {
  connection ??= connect();
  return connection;
}

/** Hears the engine's backend now and after every change (a WebGPU device loss switches to wasm). */
export function watchEngineBackend(listener: (choice: BackendChoice) => void): void {
  void getEngine().engine.watchBackend(Comlink.proxy(listener));
}

export function onEngineCrash(listener: (message: string) => void): void {
  crashListeners.add(listener);
}

/** The Train screen's RunController: every call goes to the engine worker, with the config as the screen shows it. */
export function engineRunController(): RunController {
  return {
    start: async (config: RunConfig, options?: { resumeRunId?: string }) =>
      getEngine().engine.start(config, options ?? {}),
    pause: () => getEngine().engine.pause(),
    resume: () => getEngine().engine.resume(),
    stop: () => getEngine().engine.stop(),
    subscribe(listener) {
      getEngine();
      runListeners.add(listener);
      return () => runListeners.delete(listener);
    },
  };
}
