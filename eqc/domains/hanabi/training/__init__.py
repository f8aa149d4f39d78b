"""Training Hanabi agents: configs, networks, learners (PQN-style and R2D2), checkpoints, runs."""
