"""The model-server pool of a Ray run: a `vllm:` policy becomes K vLLM servers, each a Ray actor holding
`server_gpus` GPUs (its tensor-parallel size) on a GPU node, listening on that node's address. The environment
workers then act through `openai:` over all of them (webrl.policy.pool: least-loaded server, an episode kept on
one, a server that stops answering left out)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import ray

from webrl.config import ClusterConfig
from webrl.errors import UsageError


class ModelServer:
    """One vLLM server on this actor's node (a Ray actor): `start` returns its base URL and the model name requests
    give (a LoRA adapter's, served on its base), `stop` ends it."""

    def __init__(self, model_spec: str, models_dir: Path | None, gpus: int):
        from webrl.policy.models import model_cache, resolve_model
        from webrl.policy.vllm import VLLMServer

        weights = resolve_model(model_spec, models_dir or model_cache())
        parallel = ["--tensor-parallel-size", str(gpus)] if gpus > 1 else []
        log = Path(tempfile.mkdtemp(prefix="webrl-server-")) / "vllm.log"
        self.server = VLLMServer(weights, log, host=ray.util.get_node_ip_address(), extra_args=parallel)

    def start(self) -> tuple[str, str]:
        self.server.start()
        return self.server.base_url, self.server.model_name

    def stop(self) -> None:
        self.server.stop()


@contextmanager
def server_pool(model_spec: str, cluster: ClusterConfig, models_dir: Path | None) -> Iterator[str]:
    """Start `cluster.servers` servers of `model_spec` on GPU nodes; yields the `openai:` policy spec over all of
    them; stops them afterwards."""
    gpus = ray.cluster_resources().get("GPU", 0)
    if gpus < cluster.servers * cluster.server_gpus:
        raise UsageError(
            f"vllm:{model_spec} on Ray: {cluster.servers} server(s) of {cluster.server_gpus} GPU(s) need "
            f"{cluster.servers * cluster.server_gpus} GPUs; the cluster has {gpus:g} (or name servers started "
            "elsewhere with openai:MODEL@URL1,URL2)"
        )
    server_class = ray.remote(ModelServer).options(num_gpus=cluster.server_gpus, max_restarts=0)
    servers = [server_class.remote(model_spec, models_dir, cluster.server_gpus) for _ in range(cluster.servers)]
    try:
        urls, names = zip(*ray.get([server.start.remote() for server in servers]), strict=True)
        yield f"openai:{names[0]}@{','.join(urls)}"  # every server names the model alike
    finally:
        for server in servers:
            try:
                ray.get(server.stop.remote(), timeout=60)
            except Exception:  # already gone with its node: nothing left to stop
                pass
            ray.kill(server)
