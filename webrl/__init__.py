"""webrl: train and evaluate LLM web agents with self-evolving curriculum RL (WebRL)."""

from webrl.numerics import pin_cpu_numerics

__version__ = "0.1.0"

pin_cpu_numerics()
