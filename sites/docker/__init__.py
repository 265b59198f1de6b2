"""The Docker site backend: the embedded sites in our own image, or the real WebArena images, one container per
instance set on its port block, reset by recreating containers from snapshot images committed after setup.

backend.py (`DockerBackend`) composes imagesets.py (what differs per image set), state.py (the record `up` leaves),
lifecycle.py (the containers and snapshots on the engine), engine.py (connecting, pulling, up-front checks),
images.py (which images), configure.py (the real sites' configuration); container.py runs inside our image."""
