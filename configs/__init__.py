"""The presets of `webrl train --preset NAME`: NAME.yaml, each a settings file opening with how to run it."""
