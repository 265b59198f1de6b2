"""The WebRL recipe: the phase loop (recipe), its settings, task making, rewards, metrics and training jobs.
The only layer that ties rl, curriculum, orm and runs together; nothing below imports it."""
