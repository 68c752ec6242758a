#!/usr/bin/env node
// Entry point of the `spindle` command: registers tsx so the TypeScript core runs as is, then hands over.
// Ctrl-C is caught from the first line: loading tsx and the core takes a second or more, and a Ctrl-C in
// that time stops the command at once, saying so (nothing has started, so nothing needs saving), instead
// of killing the process before its handler exists. From runCli on, its own handler takes over.
const onStartupSigint = () => {
  process.stderr.write('\nspindle: interrupted during start-up; nothing was run\n');
  process.exit(130);
};
process.on('SIGINT', onStartupSigint);
// Lets a test send its Ctrl-C once the handler exists, without guessing how long node takes to boot.
if (process.env.SPINDLE_REPORT_STARTUP === '1') process.stderr.write('spindle: start-up handler installed\n');
const { register } = await import('tsx/esm/api');
register();
const { runCli } = await import('../src/cli/run.ts');
const running = runCli(process.argv.slice(2)); // installs its SIGINT handler before its first await
process.off('SIGINT', onStartupSigint);
process.exitCode = await running;
