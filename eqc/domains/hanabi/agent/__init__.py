"""What is shipped and played: a trained Hanabi agent, its network and its files (what it is, its
:class:`~eqc.domains.hanabi.config.agent.AgentSpec`, is read from its config: :mod:`eqc.domains.hanabi.config`).

Modules: ``precision`` (requested and used precisions, and how "auto" chooses from the hardware),
``network`` (``QNetwork`` and the (symmetrized) ``Agent`` that acts), ``files`` (both file formats:
checkpoints to resume training, shipped policy directories of ``policy.safetensors`` and a sealed
``policy.json``), ``obl`` (importing the public OBL agents), ``policy`` (:func:`load_policy`:
any of those files as a :class:`TrainedPolicy` ready to play) and ``rule_agent`` (``RuleAgent``, the
rule-based baseline). Nothing here imports training, not even through another module
(``eqc.domains.hanabi.training`` makes agents, ``eqc.domains.hanabi.play`` plays them): a policy keeps its training
record as the recorded dict (``TrainedPolicy.trained_with``) and its spec says what its outputs are
(``[network] head``).
"""
