"""Builds the CUDA kernels ahead of time (gpmetis/cuda/fatbin.py) when the package is built:
for the architectures in GPMETIS_CUDA_ARCHS ('release', 'native' or '90,100'), or for this
machine's GPUs where nvidia-smi sees one. Without nvcc, or with neither, the kernels compile
through NVRTC on their first use instead."""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


def kernel_archs() -> str | None:
    if os.environ.get("GPMETIS_CUDA_ARCHS"):
        return os.environ["GPMETIS_CUDA_ARCHS"]
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0:
        return "native"
    return None


class BuildWithKernels(build_py):
    def run(self) -> None:
        archs = kernel_archs()
        if archs and shutil.which("nvcc"):
            subprocess.run([sys.executable, "-m", "gpmetis.cuda.fatbin", f"--arch={archs}"],
                           check=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        super().run()


setup(cmdclass={"build_py": BuildWithKernels})
