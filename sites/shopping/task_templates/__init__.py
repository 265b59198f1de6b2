"""Helpers for the storefront's task templates (webrl.sites.shopping.tasks)."""
