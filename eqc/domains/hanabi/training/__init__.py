"""Making Hanabi agents: the learning algorithms (PQN and IPPO over rollouts, :mod:`.rollout`; R2D2 over replay), each
one module that declares its config section, that section's rules and its learner, and their table
(:mod:`.algorithms`); the training config (:mod:`.config`: the agent's sections from :mod:`eqc.domains.hanabi.config`,
every other section here, its algorithms' from :mod:`.algorithms`); the games they play, replay, the run loop, its
log and resumption, pools of runs. What they make is an ``eqc.domains.hanabi.agent``.

Adding an algorithm: one module here (its section's dataclass, that section's rules, its learner and its
:class:`~.learner.Algorithm`) and its entry in :data:`~.algorithms.ALGORITHMS`."""
