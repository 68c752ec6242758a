/**
 * Which assistant tokens are copies: the operands, texts, file names and tool results a policy must
 * carry over from what it was shown into a tool call or its answer. The base model's card reports
 * teacher-forced accuracy on exactly these tokens, because a model that has learned the template but
 * not the copy has nothing for GRPO to reinforce.
 *
 * A copy is a maximal run of name-like characters in an assistant turn that occurs verbatim in the user
 * message or a tool response, and is not a word of the system prompt (tool names, argument names).
 * A thought is never a copy: its words are the transcript's own (`Read the order.`), and marking the
 * ones that happen to occur in a prompt weighed the first letter of some thoughts 4× in training,
 * which decides whether a turn calls or answers (`I know this.` against `Read it.`, on func_trace
 * prompts that say "It is in …": the base answered without its tool on half of them, not one in ten).
 */
import type { Trajectory } from '../../src/contracts.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';

const RUN = /[A-Za-z0-9._/-]+/g;

/** One flag per token of the trajectory: 1 on copied assistant tokens. */
export function copyMask(trajectory: Trajectory, tokenizer: TextTokenizer): number[] {
  const mask = new Array<number>(trajectory.tokens.length).fill(0);
  const seen = trajectory.messages
    .filter((m) => m.role === 'user' || m.role === 'tool')
    .map((m) => m.content)
    .join('\n');
  const template = new Set(
    trajectory.messages.filter((m) => m.role === 'system').flatMap((m) => m.content.match(RUN) ?? []),
  );
  for (const [start, end] of trajectory.turn_spans) {
    // Decode token by token so each character knows its token; special tokens (`<tool_call>`, …) become
    // a separator so no run reads into them.
    const owner: number[] = [];
    let text = '';
    let thinking = false;
    for (let t = start; t < end; t++) {
      const decoded = tokenizer.decode([trajectory.tokens[t]]);
      if (decoded === '<think>') thinking = true;
      const piece = thinking || /^<.+>$/s.test(decoded) ? '\u0000' : decoded;
      if (decoded === '</think>') thinking = false;
      text += piece;
      for (let k = 0; k < piece.length; k++) owner.push(t);
    }
    for (const m of text.matchAll(RUN)) {
      if (!seen.includes(m[0]) || template.has(m[0])) continue;
      for (let k = m.index; k < m.index + m[0].length; k++) mask[owner[k]] = 1;
    }
  }
  return mask;
}
