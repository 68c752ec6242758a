// Run by tests/cli/startup-imports.test.ts under record-imports.mjs: each invocation of the CLI that
// needs no command to run, with a line `# spindle ARGS` in the import log before the modules it loaded.
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { COMMANDS } from '../../src/cli/commands/index.ts';

const cwd = mkdtempSync(join(tmpdir(), 'spindle-startup-'));
const quiet = () => {};
const invocations = [
  [],
  ['--help'],
  ['train', '--bogus'],
  ['no-such-command'],
  ['export'],
  ...COMMANDS.map((c) => [...c.name.split(' '), '--help']),
  // A command that runs: its loads show the log catches the heavy modules.
  ['envs'],
];
for (const argv of invocations) {
  appendFileSync(process.env.IMPORT_LOG!, `# spindle ${argv.join(' ')}\n`);
  await main(argv, { cwd, out: quiet, err: quiet, interactive: false, signal: new AbortController().signal });
}
