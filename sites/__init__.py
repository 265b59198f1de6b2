"""Site backends (embedded look-alikes and the real Docker images) and the embedded sites."""
