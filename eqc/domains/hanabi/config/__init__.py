"""Configuring Hanabi agents: the schema, the agent's sections, the files and the records.

Modules: ``schema`` (the machinery: a key's default and help, strict reading, :class:`~.schema.ConfigError`
naming the key), ``agent`` (the sections an agent carries, ``[game]`` and ``[network]``, and
:class:`~.agent.AgentSpec`), ``files`` (TOML files, shipped configs by name, ``base``, ``--set`` overrides) and
``upgrade`` (recorded configs of earlier file versions read as today's). Nothing here imports training: the training
config, :class:`~eqc.domains.hanabi.training.config.TrainConfig` (every other section, each learning algorithm's own
among them, and ``load_config``), is :mod:`eqc.domains.hanabi.training.config`. The shipped configs are
``configs/*.toml`` here (``configs/hanabi`` in the repository links to them).
"""
