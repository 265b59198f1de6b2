"""The model-server pool of a Ray run: a `vllm:` policy becomes K vLLM servers, each a Ray actor holding
`server_gpus` GPUs (its tensor-parallel size) on a GPU node, listening on that node's address. The environment
workers then act through `openai:` over all of them (webrl.policy.pool: least-loaded server, an episode kept on
one, a server that stops answering left out)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import ray

from webrl.config import ClusterConfig
from webrl.errors import UsageError


class ModelServer:
    """One vLLM server on this actor's node (a Ray actor): `start` returns its base URL and the model name requests
    give (a LoRA adapter's, served on its base), `load` serves other weights (switched in place where they are
    another adapter on the same base, webrl.policy.vllm) and returns the same, `stop` ends it."""

    def __init__(self, model_spec: str, models_dir: Path | None, gpus: int):
        from webrl.policy.vllm import VLLMServer

        self.models_dir = models_dir
        parallel = ["--tensor-parallel-size", str(gpus)] if gpus > 1 else []
        log = Path(tempfile.mkdtemp(prefix="webrl-server-")) / "vllm.log"
        self.server = VLLMServer(
            self._weights(model_spec), log, host=ray.util.get_node_ip_address(), extra_args=parallel
        )

    def _weights(self, model_spec: str) -> Path:
        from webrl.policy.models import model_cache, resolve_model

        return resolve_model(model_spec, self.models_dir or model_cache())

    def start(self) -> tuple[str, str]:
        self.server.start()
        return self.server.base_url, self.server.model_name

    def load(self, model_spec: str) -> tuple[str, str, float | None]:
        """Serve `model_spec` from now on; its URL, its model name and how long a switch in place took (0: served
        already; None: the server restarted)."""
        self.server.restart(self._weights(model_spec))
        return self.server.base_url, self.server.model_name, self.server.switch_seconds

    def stop(self) -> None:
        self.server.stop()


class ServerPool:
    """`cluster.servers` vLLM servers on the cluster's GPU nodes (CPU nodes with `server_gpus: 0`), kept across
    runs: `serve` starts them for a model the first time, then has every server load the next model (an adapter
    switched in place) before it returns, so that no episode of the next run meets the old weights. Each call gives
    the `openai:` policy spec over all of them; `close` stops them."""

    def __init__(self, cluster: ClusterConfig, models_dir: Path | None):
        self.cluster, self.models_dir = cluster, models_dir
        self.servers: list = []
        self.switch_seconds: list[float | None] = []  # the last load's, per server (None: it restarted)

    def serve(self, model_spec: str) -> str:
        if self.servers:
            loaded = ray.get([server.load.remote(model_spec) for server in self.servers])
            urls, names, self.switch_seconds = (list(column) for column in zip(*loaded, strict=True))
        else:
            urls, names = zip(*self._start(model_spec), strict=True)
        return f"openai:{names[0]}@{','.join(urls)}"  # every server names the model alike

    def _start(self, model_spec: str) -> list[tuple[str, str]]:
        cluster, gpus = self.cluster, ray.cluster_resources().get("GPU", 0)
        if gpus < cluster.servers * cluster.server_gpus:
            raise UsageError(
                f"vllm:{model_spec} on Ray: {cluster.servers} server(s) of {cluster.server_gpus} GPU(s) need "
                f"{cluster.servers * cluster.server_gpus} GPUs; the cluster has {gpus:g} (or name servers started "
                "elsewhere with openai:MODEL@URL1,URL2)"
            )
        # no CPU reserved: the environment workers take the nodes' CPUs, and a server is a process of its own
        server_class = ray.remote(ModelServer).options(num_gpus=cluster.server_gpus, num_cpus=0, max_restarts=0)
        self.servers = [
            server_class.remote(model_spec, self.models_dir, cluster.server_gpus) for _ in range(cluster.servers)
        ]
        return ray.get([server.start.remote() for server in self.servers])

    def close(self) -> None:
        for server in self.servers:
            try:
                ray.get(server.stop.remote(), timeout=60)
            except Exception:  # already gone with its node: nothing left to stop
                pass
            ray.kill(server)
        self.servers = []
