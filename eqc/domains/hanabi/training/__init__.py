"""Making Hanabi agents: the training config, learners (PQN-style and R2D2), replay, the run loop, its
log and resumption, pools of runs. What they make is an ``eqc.domains.hanabi.agent``."""
