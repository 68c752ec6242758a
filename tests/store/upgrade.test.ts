import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import {
  openStore,
  getTrajectory,
  StoreError,
  DB_VERSION,
  listGroups,
  putSkill,
  listSkills,
} from '../../src/store/index.ts';
import { queryTrajectories } from '../../src/store/dataset.ts';
import { makeTrajectory } from './fixtures.ts';

describe('schema versions', () => {
  it('upgrades a v1 database to the current version, carrying and migrating its data', async () => {
    const factory = new IDBFactory();
    const v1 = await openStore({ factory, version: 1 });
    expect([...v1.db.objectStoreNames]).not.toContain('skills');
    // A v1 record: no n_steps; split missing on the oldest ones.
    const { split: _s, ...old } = makeTrajectory({ id: 'old', run_id: 'r', group_id: '' });
    const tx = v1.db.transaction(['trajectories', 'groups'], 'readwrite');
    await tx.objectStore('trajectories').put(old as never);
    await tx.objectStore('groups').put({
      id: 'g',
      run_id: 'r',
      step: 2,
      env: 'e',
      task_id: 't',
      trajectory_ids: ['old'],
      scored: null,
      created_at: 1,
    });
    await tx.done;
    await v1.close();

    const v2 = await openStore({ factory });
    expect(v2.db.version).toBe(DB_VERSION);
    expect([...v2.db.objectStoreNames]).toEqual(
      expect.arrayContaining(['markers', 'replay', 'checkpoint_heads', 'evaluations', 'skills']),
    );
    const migrated = await v2.db.get('trajectories', 'old');
    expect(migrated).toMatchObject({ n_steps: 1, split: 'train' });
    expect((await getTrajectory(v2, 'old'))?.task_id).toBe(old.task_id);
    // The new indexes see the migrated record.
    expect((await queryTrajectories(v2, { run_id: 'r', min_steps: 1 })).items.map((t) => t.id)).toEqual(['old']);
    expect(await v2.db.countFromIndex('trajectories', 'split', 'train')).toBe(1);
    expect((await listGroups(v2, 'r')).map((g) => g.id)).toEqual(['g']);
    await putSkill(v2, { name: 's', description: '', usage_count: 0, success_rate: 0, created: '', markdown: '' });
    expect((await listSkills(v2)).length).toBe(1);
    await v2.close();
  });

  it('a blocked upgrade fails with a message saying to close the other tab, and loses nothing', async () => {
    const factory = new IDBFactory();
    // The "other tab": an old version connection that ignores versionchange.
    const other = await new Promise<IDBDatabase>((resolve) => {
      const r = factory.open('spindle', 1);
      r.onupgradeneeded = () => {
        r.result.createObjectStore('runs', { keyPath: 'id' });
        r.result.createObjectStore('settings', { keyPath: 'key' });
      };
      r.onsuccess = () => resolve(r.result);
    });
    await new Promise<void>((resolve) => {
      const t = other.transaction('settings', 'readwrite');
      t.objectStore('settings').put({ key: 'k', value: 1 });
      t.oncomplete = () => resolve();
    });
    const error = await openStore({ factory }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('blocked');
    expect((error as Error).message).toMatch(
      /another tab .* older version\. Close or reload the other Spindle tabs.*Nothing stored is lost/,
    );
    other.close();
    // Once the other tab is gone, the database is still the old one with its data (the upgrade was not forced).
    // This open queues behind the blocked one (IndexedDB opens a database's connections in order), so it
    // sees whatever that one did once the other tab closed.
    const after = await new Promise<IDBDatabase>((resolve) => {
      const r = factory.open('spindle');
      r.onsuccess = () => resolve(r.result);
    });
    expect(after.version).toBe(1);
    const value = await new Promise((resolve) => {
      const g = after.transaction('settings').objectStore('settings').get('k');
      g.onsuccess = () => resolve(g.result);
    });
    expect(value).toEqual({ key: 'k', value: 1 });
    after.close();
  });

  it('with onBlocked, the open waits for the other tab and then upgrades', async () => {
    const factory = new IDBFactory();
    const v1 = await openStore({ factory, version: 1 });
    const before = v1.db.transaction('settings', 'readwrite');
    await before.store.put({ key: 'kept', value: 42 });
    await before.done;
    // Our own connections close on versionchange; simulate a tab that does not.
    const raw = await new Promise<IDBDatabase>((resolve) => {
      const r = factory.open('spindle', 1);
      r.onsuccess = () => resolve(r.result);
    });
    await v1.close();
    const messages: string[] = [];
    // The other tab closes once the open has said it is blocked.
    const opening = openStore({
      factory,
      onBlocked: (e) => {
        messages.push(e.message);
        raw.close();
      },
    });
    const store = await opening;
    expect(messages.length).toBe(1);
    expect(store.db.version).toBe(DB_VERSION);
    expect(await store.db.get('settings', 'kept')).toEqual({ key: 'kept', value: 42 });
    await store.close();
  });

  it('our connection steps aside when a newer version opens elsewhere', async () => {
    const factory = new IDBFactory();
    let told = false;
    const store = await openStore({
      factory,
      version: 1,
      onVersionChange: () => {
        told = true;
      },
    });
    const newer = await openStore({ factory });
    expect(told).toBe(true);
    expect(newer.db.version).toBe(DB_VERSION);
    await newer.close();
    void store;
  });

  it('opening data newer than the code says to reload', async () => {
    const factory = new IDBFactory();
    await new Promise<void>((resolve) => {
      const r = factory.open('spindle', DB_VERSION + 1);
      r.onsuccess = () => {
        r.result.close();
        resolve();
      };
    });
    const error = await openStore({ factory }).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe('version');
    expect((error as Error).message).toMatch(/newer than this page.*Reload this page/);
  });
});
