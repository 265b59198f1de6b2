"""Pick the site backend a configuration asks for."""

from webrl.config import Config
from webrl.errors import UsageError
from webrl.sites.embedded.backend import EmbeddedBackend


def make_backend(config: Config) -> EmbeddedBackend:
    if config.sites.backend == "docker":
        raise UsageError("the docker backend is not available yet; use the embedded backend (the default)")
    return EmbeddedBackend(config)
