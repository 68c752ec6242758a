// Boots a Node worker_thread on TypeScript source: registers tsx, then imports the entry named in workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
