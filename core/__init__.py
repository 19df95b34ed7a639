"""Bloom's shared bottom layer: the API error type, throttling, the OpenAPI schema hooks, health,
environment parsing, the task outbox, the model layer (`core.llm`) and model assets. Nothing in
`core` imports an app above it (`.importlinter` says so and `make lint` checks it)."""
