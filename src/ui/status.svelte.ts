import type { BackendChoice } from '../pipeline/engine/engine-api.ts';
import { getEngine, onEngineCrash, watchEngineBackend } from './sources/real/engine-client.ts';

/**
 * What the status strip shows: the tfjs backend the engine worker trains with and why (it changes
 * when a WebGPU device is lost and the engine falls back to wasm), isolation, storage.
 */
export class AppStatus {
  backend = $state<BackendChoice | null>(null);
  backendError = $state<string | null>(null);
  crossOriginIsolated = $state(globalThis.crossOriginIsolated === true);
  indexedDb = $state<'checking' | 'available' | 'unavailable'>('checking');

  /** Starts the engine worker (its backend honours `?backend=`) and follows its backend. */
  async start(): Promise<void> {
    void this.checkIndexedDb();
    watchEngineBackend((choice) => {
      this.backend = choice;
      this.backendError = null;
    });
    onEngineCrash((message) => {
      this.backend = null;
      this.backendError = message;
    });
    try {
      await getEngine().ready;
    } catch (err) {
      this.backendError = err instanceof Error ? err.message : String(err);
    }
  }

  private async checkIndexedDb(): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => {
        const request = indexedDB.open('spindle-probe');
        request.onsuccess = () => {
          request.result.close();
          resolve();
        };
        request.onerror = () => reject(request.error);
      });
      this.indexedDb = 'available';
    } catch {
      this.indexedDb = 'unavailable';
    }
  }
}
