"""Playing Hanabi agents: games in HLE and batched games, self-play and cross-play loops.

Modules: ``hle`` (two-player games in HLE on common decks, cross-play of policies, action
matrices), ``batched`` (:func:`play_seats`, the one batched game loop: greedy agents in seats on
``HanabiBatch``) and ``self_play`` (greedy self-play evaluation of an agent, on ``HanabiBatch`` and in
HLE). Cross-play of pools of shipped agents is ``eqc.domains.hanabi.xp``.
"""
