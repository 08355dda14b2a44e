"""The package list, the one piece of packaging pyproject.toml cannot say (see there).

``tammi_rl.envs`` and ``tammi_rl.checkpoints`` are data-only packages whose folders are
``envs/`` and ``checkpoints/`` at the repository root (``[tool.setuptools.package-dir]``);
``packages.find`` would only see the packages inside ``tammi_rl/``.
"""

from pathlib import Path

from setuptools import find_packages, setup

DATA_PACKAGES = ["tammi_rl.envs", "tammi_rl.checkpoints"]

setup(packages=find_packages(where=str(Path(__file__).parent), include=["tammi_rl", "tammi_rl.*"]) + DATA_PACKAGES)
