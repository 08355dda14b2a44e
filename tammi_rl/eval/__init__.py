"""Evaluation: arena games between players, maximum-likelihood Elo, gauntlets over a run's
checkpoints, SPRT gating, and the ``tammi-rl eval`` command.

Modules: `elo` (the rating fit), `arena` (colour-paired games and their records),
`gauntlet` (a run's checkpoints rated against anchors and each other), `sprt`
(sequential test for gating), `commands` (the CLI). Import what you need from them;
nothing heavy is imported here.
"""
