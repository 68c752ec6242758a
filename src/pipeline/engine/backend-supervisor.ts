/**
 * The engine's tfjs backend: started once, switched when a run asks for another, watched by the page
 * (the status strip), and replaced by wasm when a WebGPU device is lost (`onLost` decides what else
 * happens then: the engine drops its models and resumes an interrupted run).
 */
import type { BackendChoice } from '../../kernels/backend.ts';

export interface BackendDeps {
  /** Starts the tfjs backend (`forced` as in `?backend=`; wasm threads from `cores`). */
  initBackend(forced: string | null, cores: number): Promise<BackendChoice>;
  /** Resolves with a reason when the current backend's device is lost; null when it cannot be (wasm, cpu). */
  deviceLost(): Promise<string> | null;
}

export class BackendSupervisor {
  private current: BackendChoice | null = null;
  private initializing: Promise<BackendChoice> | null = null;
  private readonly listeners = new Map<number, (choice: BackendChoice) => void>();
  private nextId = 1;

  constructor(
    private readonly deps: BackendDeps,
    /** `navigator.hardwareConcurrency` of the page: wasm threads are sized from it. */
    public cores: number,
    /** Called once per lost device (not for one replaced already). */
    private readonly onLost: (reason: string) => void,
  ) {}

  /** Starts the backend once; later calls return the same first choice. */
  init(forced: string | null): Promise<BackendChoice> {
    this.initializing ??= this.deps.initBackend(forced, this.cores).then((choice) => {
      this.set(choice);
      return choice;
    });
    return this.initializing;
  }

  /** The backend in use now (after a device loss, no longer the first). */
  get choice(): BackendChoice | null {
    return this.current;
  }

  /** Switches to `wanted` unless it is what runs now; true when it switched (models on the old one are gone). */
  async use(wanted: string): Promise<boolean> {
    if (wanted === 'auto' || wanted === this.current?.backend) return false;
    this.set(await this.deps.initBackend(wanted, this.cores));
    return true;
  }

  /** Replaces a lost device's backend with wasm; `reason` says why in the new choice. */
  async fallBackToWasm(reason: string): Promise<void> {
    const wasm = await this.deps.initBackend('wasm', this.cores);
    this.set({ ...wasm, reason: `WebGPU device lost (${reason}); ${wasm.reason}` });
  }

  /** `listener` hears the current backend now and every change later; returns an id for `unwatch`. */
  watch(listener: (choice: BackendChoice) => void): number {
    const id = this.nextId++;
    this.listeners.set(id, listener);
    if (this.current) listener(this.current);
    return id;
  }

  unwatch(id: number): void {
    this.listeners.delete(id);
  }

  private set(choice: BackendChoice): void {
    this.current = choice;
    for (const listener of this.listeners.values()) listener(choice);
    const lost = this.deps.deviceLost();
    if (lost)
      void lost.then((reason) => {
        if (this.current === choice) this.onLost(reason);
      });
  }
}
