"""Training data, training and evaluation for Bloom's GLiNER entity model.

`corpus` holds the shipped data (a seeded template generator for training, a hand-written,
hand-labelled held-out set for testing), `evaluate` scores predictions per label and `build`
trains the model into the model cache (driven by `manage.py bloom_models`).
"""
