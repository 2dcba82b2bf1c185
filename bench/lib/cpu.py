"""The CPU a benchmark ran on, as `lscpu` names it, and which of the instruction sets the
inference engine dispatches on (issue 46) it has: results of bf16 and int8 kernels mean little
without them (standard library only)."""
import os
import re
import subprocess

# lscpu / /proc/cpuinfo flag -> the name the notes use.
FEATURES = [("avx2", "AVX2"), ("fma", "FMA"), ("avx512f", "AVX-512F"), ("avx512bw", "AVX-512BW"),
            ("avx512vl", "AVX-512VL"), ("avx512_vnni", "AVX-512 VNNI"), ("avx_vnni", "AVX-VNNI"),
            ("avx512_bf16", "AVX-512 BF16"), ("amx_bf16", "AMX-BF16"), ("amx_int8", "AMX-INT8")]


def describe():
    """{model, cores, flags: {name: bool}, summary}: lscpu's model name (/proc/cpuinfo when
    lscpu is missing) and the features above."""
    text = ""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pass
    model = re.search(r"^Model name:\s*(.*)$", text, re.M)
    flags = re.search(r"^Flags:\s*(.*)$", text, re.M)
    if not model or not flags:
        info = open("/proc/cpuinfo").read()
        model = model or re.search(r"model name\s*:\s*(.*)", info)
        flags = flags or re.search(r"flags\s*:\s*(.*)", info)
    present = set(flags.group(1).split()) if flags else set()
    has = {name: flag in present for flag, name in FEATURES}
    summary = ", ".join(f"{name} {'yes' if v else 'no'}" for name, v in has.items())
    return {"model": model.group(1).strip() if model else "unknown", "cores": os.cpu_count(),
            "flags": has, "summary": summary}
