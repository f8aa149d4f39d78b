"""What is shipped and played: a trained Hanabi agent, its spec, its network and its files.

Modules: ``spec`` (:class:`AgentSpec`: the game, network, symmetrizer group, hidden-state scheme and
precision of an agent, and the ``[game]``/``[network]`` config sections it is read from),
``precision`` (requested and used precisions, and how "auto" chooses from the hardware),
``network`` (``QNetwork`` and the (symmetrized) ``Agent`` that acts), ``files`` (both file formats:
checkpoints to resume training, shipped policy directories of ``policy.safetensors`` and a sealed
``policy.json``), ``obl`` (importing the public OBL agents), ``policy`` (:func:`load_policy`:
any of those files as a :class:`TrainedPolicy` ready to play) and ``rule_agent`` (``RuleAgent``, the
rule-based baseline). Nothing here imports training: ``eqc.domains.hanabi.training`` makes agents,
``eqc.domains.hanabi.play`` plays them.
"""
