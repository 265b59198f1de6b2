"""The options given before the command (`webrl --config FILE --state-dir DIR COMMAND`), which cli.main reads and
every command turns into its Config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from webrl.config import Config, load_config


class Globals:
    """Options given before the command; commands turn them into a Config with their own flags."""

    config_file: Path | None = None
    state_dir: Path | None = None
    debug: bool = False

    def config(self, **flags: Any) -> Config:
        return load_config(self.config_file, {"state_dir": self.state_dir, **flags})


GLOBALS = Globals()
