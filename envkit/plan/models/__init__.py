"""The plan's types: every decision as plain, frozen data, the one thing render and the engine
read."""
