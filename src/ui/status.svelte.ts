import { initBackend, type BackendChoice } from '../model/backend.ts';
import { tfjsWasmPaths } from '../model/wasm-paths.ts';

/** What the status strip shows: the tfjs backend and why, isolation, storage. */
export class AppStatus {
  backend = $state<BackendChoice | null>(null);
  backendError = $state<string | null>(null);
  crossOriginIsolated = $state(globalThis.crossOriginIsolated === true);
  indexedDb = $state<'checking' | 'available' | 'unavailable'>('checking');

  async start(forced: string | null): Promise<void> {
    void this.checkIndexedDb();
    try {
      this.backend = await initBackend({ forced, wasmPaths: tfjsWasmPaths });
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
