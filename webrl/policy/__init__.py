"""Policies and the prompt formats they use."""
