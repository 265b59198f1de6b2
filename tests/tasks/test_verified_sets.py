"""WebArena-Verified's task sets, read offline from the installed package's dataset files: counts, the eval blocks
kept whole, the md5 pin, the missing package, and where the tasks start on the real images' sites."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

pytest.importorskip("webarena_verified", reason="pip install --no-deps webarena-verified==1.2.3 (scripts/install.sh)")

from webrl.errors import UsageError  # noqa: E402
from webrl.families.verified import tasks as load  # noqa: E402
from webrl.families.verified.tasks import verified_dataset, verified_eval  # noqa: E402
from webrl.sites.task_sets import resolve_task_set  # noqa: E402


def test_the_task_sets_load_offline_from_the_package(tmp_path):
    full = resolve_task_set("webarena-verified", tmp_path)
    hard = resolve_task_set("webarena-verified:hard", tmp_path)
    assert (len(full), len(hard)) == (812, 258)
    assert {t.task_id for t in hard} < {t.task_id for t in full}
    assert not list(tmp_path.iterdir())  # nothing fetched or cached: the package's files
    task = next(t for t in full if t.task_id == 44)  # "Open my todos page"
    assert task.eval.eval_types == ["verified"] and task.start_url == "__GITLAB__"
    raw = next(t for t in json.loads(verified_dataset().read_text()) if t["task_id"] == 44)
    assert verified_eval(task).eval == raw["eval"] and verified_eval(task).revision == raw["revision"]  # kept whole
    assert verified_eval(task).task_type == "NAVIGATE" and not task.writes
    assert sum(t.writes for t in full) == sum(verified_eval(t).task_type == "MUTATE" for t in full) > 0
    multi = next(t for t in full if len(t.start_urls) > 1)
    assert multi.start_url.count(" |AND| ") == len(multi.start_urls) - 1


def test_the_md5_check_refuses_another_file(tmp_path, monkeypatch):
    copy = tmp_path / "webarena-verified.json"
    shutil.copy(verified_dataset(), copy)
    copy.write_text(copy.read_text().replace("Quest Lumaflex", "Quest Lumaflux", 1))
    monkeypatch.setattr(load, "VERIFIED_DATASET", str(copy))  # locate_file keeps an absolute path as it is
    with pytest.raises(UsageError, match=f"md5 {hashlib.md5(copy.read_bytes()).hexdigest()} is not the pinned"):
        resolve_task_set("webarena-verified", tmp_path)


def test_a_missing_package_names_the_pip_install(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "VERIFIED_DISTRIBUTION", "webarena-verified-not-installed==1.2.3")
    with pytest.raises(UsageError, match="pip install --no-deps webarena-verified-not-installed==1.2.3"):
        resolve_task_set("webarena-verified:hard", tmp_path)
