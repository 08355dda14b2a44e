"""Shipped models (``<variant>.pt``), installed as the data package ``tammi_rl.checkpoints``.

Not code: this file makes ``checkpoints/`` importable so
``importlib.resources.files("tammi_rl.checkpoints")`` finds the shipped models in an editable
install and in an installed wheel (see pyproject.toml). Other files here are not shipped.
"""
