"""Making Hanabi agents: the training config, learners (PQN-style, R2D2 and IPPO), replay, the run loop, its
log and resumption, pools of runs. What they make is an ``eqc.domains.hanabi.agent``."""
