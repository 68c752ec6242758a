// Preloaded (`node --import`) by tests/cli/startup-imports.test.ts: records every module the process
// resolves, one URL a line, in the file IMPORT_LOG names. It changes nothing the process does.
import { register } from 'node:module';

register(new URL('./record-imports.hooks.mjs', import.meta.url), { data: { log: process.env.IMPORT_LOG } });
