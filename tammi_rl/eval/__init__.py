"""Evaluation: games between players, maximum-likelihood Elo, gauntlets over a run's
checkpoints and SPRT gating.

Modules: `match` (games and matches from balanced openings, with clocks and PDN),
`openings` (the variants' opening books), `arena` (colour-paired games and their
records), `elo` (the rating fit), `gauntlet` (a run's checkpoints rated against anchors
and each other), `sprt` (the sequential test for gating), `paired` (two agents' matches
against one opponent compared opening by opening). The ``eval`` and ``match``
commands are in `tammi_rl.cli.matches`. Import what you need from the modules; nothing
heavy is imported here.
"""
