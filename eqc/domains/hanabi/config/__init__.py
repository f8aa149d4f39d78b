"""Configuring Hanabi agents and their training: the schema, every section, the files and the records.

Modules: ``schema`` (the machinery: a key's default and help, strict reading, :class:`~.schema.ConfigError`
naming the key), ``agent`` (the sections an agent carries, ``[game]`` and ``[network]``, and
:class:`~.agent.AgentSpec`), ``algorithms`` (the learning algorithms: each one's section and rules, the
:class:`~.algorithms.Algorithm` that ``[run] algorithm`` names), ``train`` (the training config
:class:`~.train.TrainConfig`: every other section, the table ``ALGORITHMS``, and :func:`~.train.load_config`),
``files`` (TOML files, shipped configs by name, ``base``, ``--set`` overrides) and ``upgrade`` (recorded configs of
earlier file versions read as today's). The shipped configs are ``configs/*.toml`` here (``configs/hanabi`` in
the repository links to them).
"""
