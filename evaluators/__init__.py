"""WebArena evaluators (installed as ``webrl.evaluators``): string_match, url_match and program_html with the
exact semantics of three harnesses (``mode``: webarena, vab, browsergym), the evaluation helper functions, and a
pluggable LLM judge. Entry point: ``await evaluate(task, answer, page, mode=..., judge=..., urls=...)``."""

from webrl.evaluators.judge import Judge, OpenAIJudge, parse_judge_spec
from webrl.evaluators.result import MODES, EvalResult
from webrl.evaluators.router import evaluate

__all__ = ["MODES", "EvalResult", "Judge", "OpenAIJudge", "evaluate", "parse_judge_spec"]
