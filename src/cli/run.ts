/** Wires `main` to the real process: stdout/stderr, Ctrl-C as an abort signal (a second Ctrl-C exits now). */
import { main } from './main.ts';

export async function runCli(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nspindle: interrupted — saving a checkpoint (Ctrl-C again to quit now)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const code = await main(argv, {
      cwd: process.cwd(),
      out: (line) => process.stdout.write(line + '\n'),
      err: (line) => process.stderr.write(line + '\n'),
      interactive: Boolean(process.stdout.isTTY),
      signal: controller.signal,
    });
    return controller.signal.aborted && code === 0 ? 130 : code;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
