"""Training: step data, the WebRL objective (official and paper forms), critic, replay buffer, DeepSpeed engine."""
