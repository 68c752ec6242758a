/** Long actions (imports, exports) as jobs with progress, an error that stays beside them, and cancel. */
import { errorMessage } from '../../lib/format.ts';

let nextId = 1;

export class Job {
  readonly id = nextId++;
  done = $state(0);
  total = $state<number | null>(null);
  status = $state<'running' | 'done' | 'error' | 'cancelled'>('running');
  error = $state<string | null>(null);
  result = $state<string | null>(null);
  readonly abort = new AbortController();

  constructor(
    readonly label: string,
    /** Where on the screen the job belongs, so its error shows next to the button that started it. */
    readonly place: string,
  ) {}

  progress = (done: number, total: number | null): void => {
    this.done = done;
    this.total = total;
  };

  async run<T>(work: (job: Job) => Promise<T>, describe: (result: T) => string): Promise<T | null> {
    try {
      const result = await work(this);
      this.status = 'done';
      this.result = describe(result);
      return result;
    } catch (err) {
      this.status = this.abort.signal.aborted ? 'cancelled' : 'error';
      this.error = this.abort.signal.aborted ? null : errorMessage(err);
      return null;
    }
  }
}
