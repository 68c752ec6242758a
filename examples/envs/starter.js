// The smallest useful environment: the Environments screen's "New" starts from it. Rename it, then
// change sample (the task, drawn only from rng), evaluate (the score in [0, 1]) and expert (a scripted
// solution the check runs through the sandbox). treasure-hunt.js shows an environment with its own tools.

export default {
  name: 'my_environment',
  description: 'Write a word backwards.',
  tags: ['example'],
  levels: [1, 2, 3],

  sample(rng, level) {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    let word = '';
    for (let i = 0; i < 3 + 2 * level; i++) word += letters[rng.int(0, letters.length - 1)];
    return { prompt: `Write the word "${word}" backwards.`, data: { answer: word.split('').reverse().join('') }, key: word };
  },

  evaluate(task, trajectory) {
    return String(trajectory.final_response || '').trim().toLowerCase() === task.data.answer ? 1 : 0;
  },

  expert(task) {
    return [task.data.answer];
  },
};
