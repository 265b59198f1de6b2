"""Runs: evaluation runs, their episode records, summaries and reports."""
