/**
 * A tiny hook for the e2e suite (and the devtools console): `window.__spindleStore` exposes a few
 * store calls over the real IndexedDB of the page. It opens nothing until called.
 */
import type { Trajectory } from '../../contracts.ts';
import { openStore, type Store } from '../../store/db.ts';
import { getTrajectory, putTrajectory } from '../../store/trajectories.ts';
import { trajectoryStats } from '../../store/dataset.ts';
import { getSetting, setSetting } from '../../store/settings.ts';
import { saveCheckpoint, loadLatestCheckpoint } from '../../store/checkpoints.ts';
import { storageEstimate, requestPersistence } from '../../store/quota.ts';

let opened: Promise<Store> | null = null;
const store = () => (opened ??= openStore());

const api = {
  version: async () => (await store()).db.version,
  putTrajectory: async (t: Trajectory) => putTrajectory(await store(), t),
  getTrajectory: async (id: string) => getTrajectory(await store(), id),
  stats: async () => trajectoryStats(await store()),
  setSetting: async (key: string, value: unknown) => setSetting(await store(), key, value),
  getSetting: async (key: string) => getSetting(await store(), key, null),
  saveCheckpoint: async (runId: string, step: number, values: number[]) =>
    saveCheckpoint(await store(), { run_id: runId, step, adapter: new Float32Array(values).buffer, optimizer: null }),
  latestCheckpoint: async (runId: string) => {
    const c = await loadLatestCheckpoint(await store(), runId);
    return c && { step: c.step, values: Array.from(new Float32Array(c.adapter)) };
  },
  estimate: storageEstimate,
  persist: requestPersistence,
};

export type SpindleStoreHook = typeof api;
(globalThis as unknown as { __spindleStore: SpindleStoreHook }).__spindleStore = api;
