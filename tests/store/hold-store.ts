/**
 * A second process for store-lock.test.ts: opens the file store in argv[2] to write, stores run-a with two
 * trajectories, says `ready` on stdout, and waits. On the line `finish` (stdin, then closed) it stores one more
 * trajectory, marks the run completed, closes the store and says `closed`; a signal or SIGKILL may end it
 * while it waits.
 */
import { createInterface } from 'node:readline';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { createRun, putTrajectories, putTrajectory, setRunStatus } from '../../src/store/index.ts';
import { makeTrajectory } from './fixtures.ts';

const store = await openFileStore(process.argv[2]);
await createRun(store, DEFAULT_CONFIG, { id: 'run-a' });
await putTrajectories(store, [
  makeTrajectory({ id: 'a-1', run_id: 'run-a', group_id: 'ga' }),
  makeTrajectory({ id: 'a-2', run_id: 'run-a', group_id: 'ga' }),
]);
await store.flush();
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) if (line === 'finish') break;
await putTrajectory(store, makeTrajectory({ id: 'a-3', run_id: 'run-a', group_id: 'ga2' }));
await setRunStatus(store, 'run-a', 'completed');
await store.close();
process.stdout.write('closed\n');
