"""The shipped variant files and opening lists, installed as the data package ``tammi_rl.envs``.

Not code: this file makes ``envs/`` importable so ``importlib.resources.files("tammi_rl.envs")``
finds the folder in an editable install and in an installed wheel (see pyproject.toml).
"""
