"""The browser environment: observation, actions, episode loop."""
