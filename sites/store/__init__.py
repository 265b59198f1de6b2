"""The store database shared by the storefront (shopping) and its admin (shopping_admin)."""

from pathlib import Path

from webrl.sites.platform import DatabaseSpec
from webrl.sites.store.seed import seed_store

STORE = DatabaseSpec(name="store", schema=Path(__file__).with_name("schema.sql"), seed=seed_store, version=1)
