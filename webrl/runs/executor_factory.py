"""The executor a configuration names (`cluster.executor`): local (webrl.runs.executor) or Ray
(webrl.runs.ray_executor, imported only for a Ray run)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from webrl.errors import UsageError
from webrl.evaluators.judge import Judge
from webrl.policy.base import Policy
from webrl.policy.factory import make_policy, serving
from webrl.runs.episodes import EvalSettings
from webrl.runs.executor import Executor, LocalExecutor
from webrl.sites.base import SiteBackend

if TYPE_CHECKING:
    from webrl.runs.model_servers import ServerPool


@contextmanager
def executor_for(
    settings: EvalSettings,
    backend: SiteBackend,
    models_dir: Path | None = None,
    judge: Judge | None = None,
    starting: Callable[[], AbstractContextManager] = nullcontext,
    kept: Policy | ServerPool | None = None,
) -> Iterator[Executor]:
    """The executor the configuration names (`cluster.executor`), acting with the policy `settings.policy` names.
    Locally the policy is built and served here (inside `starting()`, a spinner) and let go afterwards, unless the
    caller keeps one across runs (`kept`: started here, closed by the caller); on Ray each environment worker builds
    its own, and a vllm: policy's servers are started for the run or, kept across runs, given the run's model."""
    cluster = backend.config.cluster
    if cluster.executor == "ray":
        try:
            from webrl.runs.ray_executor import RayExecutor
        except ImportError as err:
            raise UsageError(
                f"--executor ray needs Ray ({err.name} is not installed): pip install 'webrl[cluster]'"
            ) from None
        with RayExecutor(backend.config, settings, models_dir, starting, kept) as executor:
            yield executor
        return
    if kept is not None:
        with starting():
            kept.start()
        yield LocalExecutor(backend, kept, judge)
        return
    policy = make_policy(settings.policy, models_dir, settings.context)
    try:
        with serving(policy, starting):
            yield LocalExecutor(backend, policy, judge)
    finally:
        del policy
        gc.collect()
