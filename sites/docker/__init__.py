"""The Docker site backend: the embedded sites in our own image, or the real WebArena images, one container per
instance set on its port block, reset by recreating containers from snapshot images committed after setup."""
