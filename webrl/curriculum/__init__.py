"""The self-evolving curriculum: new tasks for the next phase from the last
phase's failures, then filtered.

- `generate`: an LLM writes new tasks from failed seeds (in-breadth evolution); they carry no rule evaluator
  and are scored by the ORM.
- `evolve`: on the embedded backend, new verifiable tasks from the same or neighbouring templates with other
  entities (real evaluators and scripted solutions; no generator model needed).
- `filters`: the critic band on the start page and the per-site feasibility rules.
- `seen`: what counts as the same task, and fresh task ids.
"""
