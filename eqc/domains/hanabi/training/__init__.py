"""Making Hanabi agents: learners (PQN and IPPO over rollouts, :mod:`.rollout`; R2D2 over replay) and their table
(:mod:`.learners`), the games they play, replay, the run loop, its log and resumption, pools of runs. The training
config is :mod:`eqc.domains.hanabi.config` (every section; the algorithms' in :mod:`eqc.domains.hanabi.config.algorithms`).
What they make is an ``eqc.domains.hanabi.agent``."""
