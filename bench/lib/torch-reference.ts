/**
 * The PyTorch reference for the model benchmarks: the same architecture as TransformerModel written
 * independently in PyTorch, timed the same way (a full fine-tuning step with Adam, or KV-cached greedy
 * decoding), on the CPU (bench/model.bench.ts) or a CUDA device (bench/webgpu.bench.ts). The Python is
 * SPINDLE_PYTHON, else /usr/bin/python3 (Debian's python3-torch), else python3 on the PATH.
 *
 * Threads are pinned on the CPU: torch.set_num_threads alone does not reach the BLAS, and Debian's
 * OpenBLAS (libopenblas0-pthread) otherwise runs its products on every core while torch reports
 * "1 thread". The script reports the threads OpenBLAS itself says it uses.
 */
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import type { ModelConfig } from '../../src/model/config.ts';

/** The same architecture in PyTorch (independent code), timed the same way. */
export const TORCH_SCRIPT = String.raw`
import json, math, sys, time, torch
cfg = json.loads(sys.argv[1]); B, T, steps = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
mode, dev = sys.argv[5], torch.device(sys.argv[6])
torch.manual_seed(0)
if int(sys.argv[7]) > 0: torch.set_num_threads(int(sys.argv[7]))  # 0: as installed
if dev.type != 'cpu': torch.set_default_device(dev)  # torch >= 2; Debian's 1.13 runs the cpu case
C, I, H, Hkv, D, V, L = cfg['hiddenSize'], cfg['intermediateSize'], cfg['numHeads'], cfg['numKvHeads'], cfg['headDim'], cfg['vocabSize'], cfg['numLayers']
class RMS(torch.nn.Module):
    def __init__(s): super().__init__(); s.w = torch.nn.Parameter(torch.ones(C))
    def forward(s, x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg['rmsNormEps']) * s.w
def rot(x): h = x.shape[-1] // 2; return torch.cat([-x[..., h:], x[..., :h]], -1)
inv = 1.0 / (cfg['ropeTheta'] ** (torch.arange(0, D, 2).float() / D)); f = torch.outer(torch.arange(T).float(), inv)
cos, sin = torch.cat([f, f], -1).cos(), torch.cat([f, f], -1).sin()
class Block(torch.nn.Module):
    def __init__(s):
        super().__init__(); lin = lambda i, o: torch.nn.Linear(i, o, bias=False)
        s.n1, s.n2 = RMS(), RMS(); s.q, s.k, s.v, s.o = lin(C, H*D), lin(C, Hkv*D), lin(C, Hkv*D), lin(H*D, C)
        s.g, s.u, s.d = lin(C, I), lin(C, I), lin(I, C)
    def forward(s, x):
        b, t, _ = x.shape; h = s.n1(x)
        q = s.q(h).view(b, t, H, D).transpose(1, 2); k = s.k(h).view(b, t, Hkv, D).transpose(1, 2); v = s.v(h).view(b, t, Hkv, D).transpose(1, 2)
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k, v = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
        a = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        a = a.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float('-inf')).softmax(-1)
        x = x + s.o((a @ v).transpose(1, 2).reshape(b, t, H*D)); h = s.n2(x)
        return x + s.d(torch.nn.functional.silu(s.g(h)) * s.u(h))
class Model(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.e = torch.nn.Embedding(V, C); s.blocks = torch.nn.ModuleList([Block() for _ in range(L)]); s.n = RMS()
    def forward(s, ids):
        x = s.e(ids)
        for blk in s.blocks: x = blk(x)
        return s.n(x) @ s.e.weight.T
m = Model()
if mode == 'generate':
    # KV-cached greedy decoding of B rows, 'steps' new tokens after a 4-token prompt: tokens/s.
    def attend(s, x, pos, cache):
        b, t, _ = x.shape; h = s.n1(x)
        q = s.q(h).view(b, t, H, D).transpose(1, 2); k = s.k(h).view(b, t, Hkv, D).transpose(1, 2); v = s.v(h).view(b, t, Hkv, D).transpose(1, 2)
        c, si = cos_all[pos:pos + t], sin_all[pos:pos + t]
        q, k = q * c + rot(q) * si, k * c + rot(k) * si
        if cache is not None: k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        kk, vv = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
        a = (q @ kk.transpose(-1, -2)) / math.sqrt(D)
        if t > 1: a = a.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float('-inf'))
        x = x + s.o((a.softmax(-1) @ vv).transpose(1, 2).reshape(b, t, H*D)); h = s.n2(x)
        return x + s.d(torch.nn.functional.silu(s.g(h)) * s.u(h)), (k, v)
    P = 4 + steps + 1; f2 = torch.outer(torch.arange(P).float(), inv); cos_all, sin_all = torch.cat([f2, f2], -1).cos(), torch.cat([f2, f2], -1).sin()
    def decode():
        ids = torch.tensor([[256, 10, 20, 30]] * B); caches = [None] * L; pos = 0; out = 0
        for i in range(steps):
            x = m.e(ids)
            for j, blk in enumerate(m.blocks): x, caches[j] = attend(blk, x, pos, caches[j])
            pos += ids.shape[1]; logits = m.n(x[:, -1]) @ m.e.weight.T
            ids = logits.argmax(-1, keepdim=True); ids.tolist(); out += B
        return out
    with torch.no_grad():
        decode(); t0 = time.perf_counter(); n = decode(); secs = time.perf_counter() - t0
    print(json.dumps({'tokens_per_s': n / secs, 'torch': torch.__version__, 'threads': torch.get_num_threads(), 'device': str(dev)})); sys.exit(0)
opt = torch.optim.Adam(m.parameters(), lr=3e-4)
ids = torch.tensor([[(b * 31 + t * 7) % 256 for t in range(T)] for b in range(B)])
times = []
for i in range(steps + 1):
    t0 = time.perf_counter(); logits = m(ids)
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step(); loss.item(); times.append((time.perf_counter() - t0) * 1000)
times = times[1:]
import ctypes, os
blas = os.path.realpath('/lib/x86_64-linux-gnu/libblas.so.3') if os.path.exists('/lib/x86_64-linux-gnu/libblas.so.3') else 'unknown'
try: blas_threads = ctypes.CDLL(blas).openblas_get_num_threads()
except Exception: blas_threads = None
print(json.dumps({'times': times, 'torch': torch.__version__, 'threads': torch.get_num_threads(), 'blas': blas, 'blas_threads': blas_threads, 'device': str(dev), 'params': sum(p.numel() for p in m.parameters())}))
`;

export interface TorchRun {
  times: number[];
  torch: string;
  threads: number;
  blas: string;
  /** What OpenBLAS reports (null when the BLAS is not OpenBLAS). */
  blas_threads: number | null;
  device: string;
  params: number;
}

export interface TorchArgs {
  batch: number;
  seq: number;
  /** Timed train steps, or tokens to decode with `generate`. */
  steps: number;
  generate?: boolean;
  /** 'cpu' (default) or 'cuda'. */
  device?: string;
  /**
   * CPU threads for torch and its BLAS, pinned; 'as-installed' leaves both to their defaults (here:
   * torch 1 thread, OpenBLAS every core, the fastest mix on this machine). Default 1.
   */
  threads?: number | 'as-installed';
}

function python(): string {
  if (process.env.SPINDLE_PYTHON) return process.env.SPINDLE_PYTHON;
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

/** Whether torch imports, and sees a CUDA device. */
export function torchAvailability(): { torch: boolean; cuda: boolean; reason?: string } {
  const probe = spawnSync(python(), ['-c', 'import torch; print(torch.cuda.is_available())'], { encoding: 'utf8' });
  if (probe.status !== 0)
    return {
      torch: false,
      cuda: false,
      reason: `${python()} cannot import torch (apt-get install python3-torch, or set SPINDLE_PYTHON)`,
    };
  return { torch: true, cuda: probe.stdout.trim().endsWith('True') };
}

/** Runs TORCH_SCRIPT and parses its last line, or says why it could not. */
export function runTorch<T>(config: ModelConfig, a: TorchArgs): T | { skipped: string } {
  const available = torchAvailability();
  if (!available.torch) return { skipped: available.reason! };
  const device = a.device ?? 'cpu';
  if (device === 'cuda' && !available.cuda) return { skipped: 'torch sees no CUDA device' };
  const threads = a.threads ?? 1;
  const args = [
    JSON.stringify(config),
    a.batch,
    a.seq,
    a.steps,
    a.generate ? 'generate' : 'train',
    device,
    threads === 'as-installed' ? 0 : threads,
  ].map(String);
  const pinned =
    threads === 'as-installed'
      ? {}
      : { OMP_NUM_THREADS: String(threads), OPENBLAS_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) };
  const env = { ...process.env, ...pinned };
  const run = spawnSync(python(), ['-c', TORCH_SCRIPT, ...args], { encoding: 'utf8', env });
  if (run.status !== 0) return { skipped: `torch script failed: ${run.stderr.trim().split('\n').pop()}` };
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as T;
}
