"""webrl: train and evaluate LLM web agents with self-evolving curriculum RL (WebRL)."""

__version__ = "0.1.0"
