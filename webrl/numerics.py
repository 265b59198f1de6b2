"""The same bits on every x86-64 processor with AVX2: a CPU run's numbers depend on its seed, not on the machine.

torch's matrix products go to MKL, which picks a code path by processor (AVX-512 on an Intel Xeon, AVX2 on an AMD
EPYC), and torch's own kernels pick theirs by instruction set; each path rounds differently, so the same seed gave
different digits on the two machines. Pinning both to their AVX2 paths (MKL's conditional numerical
reproducibility, ATen's CPU capability) makes them agree; measured here, the result is also the same at 1, 2 and 3
threads. Both libraries read the variables when first used, so setting them when webrl is imported is early enough
in every webrl process (the CLI, training jobs, Ray workers). A variable already set wins: `ATEN_CPU_CAPABILITY=
avx512` trades the agreement for the faster kernels. Other processors (ARM, x86 without AVX2) keep their defaults.
"""

from __future__ import annotations

import os
from pathlib import Path

PINNED = {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}


def cpu_has(flag: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the processor lists `flag` (e.g. avx2) among its features (Linux; False where nothing says)."""
    try:
        return flag in cpuinfo.read_text().split()
    except OSError:
        return False


def pin_cpu_numerics() -> None:
    """Set PINNED in this process's environment (and so its children's), where the processor has AVX2."""
    if cpu_has("avx2"):
        for name, value in PINNED.items():
            os.environ.setdefault(name, value)
