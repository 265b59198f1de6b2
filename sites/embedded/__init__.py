"""The embedded backend: our own look-alike WebArena sites, served by one local uvicorn process."""
