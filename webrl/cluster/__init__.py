"""webrl on a Ray cluster: environment workers and model servers (the optional `cluster` extra)."""
