#!/usr/bin/env node
// Entry point of the `spindle` command: registers tsx so the TypeScript core runs as is, then hands over.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/run.ts');
process.exitCode = await runCli(process.argv.slice(2));
