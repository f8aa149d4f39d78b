"""Configuring Hanabi agents and their training: the schema, every section, the files and the records.

Modules: ``schema`` (the machinery: a key's default and help, strict reading, :class:`~.schema.ConfigError`
naming the key), ``agent`` (the sections an agent carries, ``[game]`` and ``[network]``, and
:class:`~.agent.AgentSpec`), ``train`` (the training config :class:`~.train.TrainConfig`: every other section,
each learning algorithm's own section from the table ``eqc.domains.hanabi.training.algorithms.ALGORITHMS`` (an
algorithm's module declares its section, rules and learner together), and :func:`~.train.load_config`),
``files`` (TOML files, shipped configs by name, ``base``, ``--set`` overrides) and ``upgrade`` (recorded configs of
earlier file versions read as today's). The shipped configs are ``configs/*.toml`` here (``configs/hanabi`` in
the repository links to them).
"""
