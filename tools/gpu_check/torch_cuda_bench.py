#!/usr/bin/env python3
"""torch's CUDA softmax + multinomial on stable_cuda_bench's shapes, timed with CUDA events.

The baseline for the table of docs/performance.md: what a PyTorch user writes (x / T, softmax in the input
dtype's float upcast, multinomial), one draw per row. Run by run_on_gpu.sh where the machine's
python3 has torch with CUDA.
"""
import torch


def time_us(fn, iters=10):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) * 1000.0 / iters


def main():
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
    print("| torch softmax + multinomial | time (us) | logits GB/s |")
    print("|---|---|---|")
    for dtype, name in [(torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16")]:
        for batch in (1, 256):
            for v in (32768, 131072, 262144):
                x = (torch.randn(batch, v, device="cuda") * 3).to(dtype)

                def run():
                    p = torch.softmax(x.float() / 0.8, dim=-1)
                    return torch.multinomial(p, 1)

                us = time_us(run)
                gbs = x.numel() * x.element_size() / (us * 1e-6) / 1e9
                print(f"| {name} batch {batch} V {v} | {us:.1f} | {gbs:.0f} |")


if __name__ == "__main__":
    main()
