// A tool no built-in environment has: tide_height(gauge) reads a tide gauge. The height is drawn per
// task, so it is found only by calling the tool with the gauge the question names, and the answer is the
// number the gauge gave. A base model that never saw this tool scores 0 here until it is shown how
// (demonstrations from `expert`, then SFT, then GRPO: docs/workflows.md#a-new-tool-bootstrapped).

export default {
  name: 'tide_table',
  description: 'Read the tide gauge the question names and say the height.',
  tags: ['new-tool', 'example'],
  levels: [1],
  instructions: 'Call tide_height with the gauge, then answer with the height in centimetres.',

  tools: {
    tide_height: {
      description: 'The tide height now at a gauge, in centimetres.',
      parameters: { gauge: { type: 'string', description: 'the gauge number the question names' } },
      run({ gauge }, state, task) {
        const asked = String(gauge ?? '').trim();
        if (asked !== task.data.gauge) throw new Error(`there is no gauge "${asked}"; give the gauge number the question names`);
        state.read = true;
        return `Gauge ${task.data.gauge}: ${task.data.height} cm.`;
      },
    },
  },

  init() {
    return { read: false };
  },

  sample(rng) {
    const gauge = String(rng.int(1000, 9999));
    const height = String(rng.int(100, 999));
    return { prompt: `How high is the tide at gauge ${gauge} now?`, data: { gauge, height }, key: `${gauge}/${height}` };
  },

  // Success needs the asked gauge read and its height as the whole answer: a guessed
  // number scores 0, and so does reading the gauge and answering something else.
  evaluate(task, trajectory, state) {
    const answer = String(trajectory.final_response ?? '').trim().replace(/\s*cm\.?$/i, '');
    return state.read && answer === task.data.height ? 1 : 0;
  },

  expert(task) {
    return [{ tool: 'tide_height', args: { gauge: task.data.gauge } }, task.data.height];
  },
};
