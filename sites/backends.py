"""Pick the site backend a configuration asks for."""

from webrl.config import Config
from webrl.sites.docker.backend import DockerBackend
from webrl.sites.docker.state import ImageSetName
from webrl.sites.embedded.backend import EmbeddedBackend


def make_backend(config: Config, images: ImageSetName | None = None) -> EmbeddedBackend | DockerBackend:
    """The configured backend. With the default (embedded) configuration, docker sites that `webrl up --backend
    docker` started for this state directory are found too, so down, status, reset and eval need no flag."""
    if config.sites.backend == "docker":
        return DockerBackend(config, images)
    embedded = EmbeddedBackend(config)
    if embedded.running() is None and DockerBackend.recorded(config):
        return DockerBackend(config, images)
    return embedded
