/**
 * file_chain: a chain of lookups whose keys come from results. The start file names the next file
 * (`next: data/plum.txt`), that one the next, and the last holds a word; the answer is that word.
 * Level L has L + 1 files on the chain, so success takes L + 1 dependent reads: each file's name exists
 * only in the previous file. Dead-end files hold other words. In RECOVERY_SHARE of the items one file
 * on the chain was moved to another directory: reading it where the chain says fails ("No such file"),
 * `find . -name` shows where it went, and success needs that corrected read.
 *
 * Success: every chain file read by a successful sh call that names it and shows its content, each
 * after the previous one (step-evidence.ts), and the final answer is the word; either part alone is half
 * credit.
 */
import type { Task } from '../contracts.ts';
import { cleanAnswer, finalAnswer } from './answer.ts';
import { CONTENT_WORDS, DIR_NAMES, FILE_EXTS, FILE_STEMS } from './data/shell.ts';
import { CHAIN_DECOYS, CHAIN_FILES, CHAIN_PROMPT, MOVED_DIRS, RECOVERY_SHARE } from './data/multi-step.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { scoreParts } from './evidence.ts';
import { allNeedsMet, readNeed, type StepNeed } from './step-evidence.ts';
import type { EnvironmentSpec, ToolboxSetup } from './types.ts';

export interface ChainLink {
  /** Where the previous file (or the prompt) says it is. */
  named: string;
  /** Where it really is: `named`, unless it was moved. */
  path: string;
  content: string;
}

export interface FileChainData {
  links: ChainLink[];
  word: string;
  files: Record<string, string>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

const sh = (command: string) => ({ name: 'sh', arguments: { command } });
const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

export const fileChain: EnvironmentSpec = {
  name: 'file_chain',
  description: 'Follow a chain of files, each naming the next, to the word at its end; some files have moved.',
  tags: ['shell', 'files', 'multi-step', 'tool-use'],
  requiredTools: ['sh'],
  systemStyle: 'compact',
  sample(rng, difficulty) {
    const n = CHAIN_FILES[difficulty];
    const names = rng
      .shuffle(FILE_STEMS)
      .slice(0, n + CHAIN_DECOYS)
      .map((stem) => stem + rng.pick(FILE_EXTS));
    const paths = names.map((name) => `${rng.pick(DIR_NAMES)}/${name}`);
    const [word, ...otherWords] = rng.shuffle(CONTENT_WORDS);
    const moved = rng.chance(RECOVERY_SHARE) ? rng.int(1, n - 1) : -1;
    const links: ChainLink[] = paths.slice(0, n).map((named, i) => ({
      named,
      path: i === moved ? `${rng.pick(MOVED_DIRS)}/${baseName(named)}` : named,
      content: i === n - 1 ? `word: ${word}` : `next: ${paths[i + 1]}`,
    }));
    const files: Record<string, string> = {};
    // Dead ends: some name another dead end, the rest hold a word of their own.
    paths.slice(n).forEach((path, i, decoys) => {
      files[path] = i > 0 && rng.chance(0.5) ? `next: ${decoys[i - 1]}\n` : `word: ${otherWords[i]}\n`;
    });
    for (const link of links) files[link.path] = `${link.content}\n`;
    return {
      prompt: CHAIN_PROMPT.replace('{start}', links[0].named),
      data: { links, word, files, recovery: moved >= 0 } satisfies FileChainData,
      key: `${links.map((l) => l.path).join('>')}=${word}`,
    };
  },
  toolbox: (task: Task): ToolboxSetup => ({ files: (task.data as FileChainData).files }),
  evaluate(task, trajectory) {
    const { links, word } = task.data as FileChainData;
    const needs: StepNeed[] = links.map((link, i) => readNeed(link.path, link.content, i > 0 ? [i - 1] : undefined));
    return scoreParts(allNeedsMet(trajectory, needs), cleanAnswer(finalAnswer(trajectory)) === word);
  },
  expert(task) {
    const { links, word } = task.data as FileChainData;
    const turns: string[] = [];
    links.forEach((link, i) => {
      turns.push(callTurn(i === 0 ? 'Read the start.' : 'Follow next.', [sh(`cat ${link.named}`)]));
      if (link.path !== link.named) {
        turns.push(callTurn('Not there. Find it.', [sh(`find . -name ${baseName(link.named)}`)]));
        turns.push(callTurn('Read it there.', [sh(`cat ${link.path}`)]));
      }
    });
    return [...turns, answerTurn(word)];
  },
};
